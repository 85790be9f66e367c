// Command terraform-provider-hyperpod serves the hyperpod Terraform provider.
package main

import (
	"flag"
	"fmt"
	"log"
	"os"
	"path/filepath"
	rtdebug "runtime/debug"
	"runtime/pprof"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6/tf6server"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/provider"
)

// Run "go generate" to format example terraform files and generate the docs for the registry/website.

//go:generate terraform fmt -recursive ./examples/
//go:generate go run ./internal/cmd/catalogdoc -out templates/guides/instance-catalog.md.tmpl
//go:generate go run -C tools github.com/hashicorp/terraform-plugin-docs/cmd/tfplugindocs generate --provider-dir .. --provider-name hyperpod

// version is stamped by goreleaser and `make install` (-X main.version=...); "dev" for other builds.
var version = "dev"

func main() {
	var debug, printVersion bool
	flag.BoolVar(&debug, "debug", false, "set to true to run the provider with support for debuggers like delve")
	flag.BoolVar(&printVersion, "version", false, "print the provider's version and exit")
	flag.Parse()
	if printVersion {
		fmt.Println(version)
		return
	}
	if !debug {
		silenceUnreadLogs()
	}
	// The live heap stays small (see internal/rpcctx), so Go's default GOGC=100 collects after
	// every few megabytes of the framework's per-RPC garbage: a sixth of a large plan's time.
	// GOGC=400 saves that; the soft limit stops the garbage of a 1000-team command, whose read
	// cache holds a few thousand objects, from growing the heap past 88 MiB. With about 50 MB of
	// binary and runtime pages on top, the resident set stays under 150 MB at 1000 teams, with
	// no measured slowdown (bench/findings.md). That holds for every command but a plan that
	// previews admission: it holds a snapshot of the cluster's Workloads and queues for the rest
	// of the run, under which this limit left the collector running after every few megabytes.
	// There the limit is doubled while the snapshot is read and is then this limit plus the live
	// heap (makeRoomForSnapshot, internal/provider), and that plan's resident set grows by about
	// the snapshot's size. GOGC and GOMEMLIMIT, when set, win.
	if os.Getenv("GOGC") == "" {
		rtdebug.SetGCPercent(400)
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		rtdebug.SetMemoryLimit(88 << 20)
	}

	// For maintainers measuring the provider inside real Terraform runs (see README,
	// Benchmarks): each provider process writes its CPU profile, and its heap profile at exit, to this directory.
	if dir := os.Getenv("TF_HYPERPOD_CPU_PROFILE_DIR"); dir != "" {
		f, err := os.Create(filepath.Join(dir, fmt.Sprintf("cpu-%d.pprof", os.Getpid())))
		if err != nil {
			log.Fatal(err.Error())
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			log.Fatal(err.Error())
		}
		go func() {
			for i := 0; ; i++ {
				time.Sleep(2 * time.Second)
				for _, p := range []string{"heap", "goroutine"} {
					if h, err := os.Create(filepath.Join(dir, fmt.Sprintf("%s-%d-%02d.pprof", p, os.Getpid(), i))); err == nil {
						_ = pprof.Lookup(p).WriteTo(h, 0)
						_ = h.Close()
					}
				}
			}
		}()
		defer func() {
			pprof.StopCPUProfile()
			_ = f.Close()
			for _, p := range []string{"heap", "goroutine"} {
				if h, err := os.Create(filepath.Join(dir, fmt.Sprintf("%s-%d.pprof", p, os.Getpid()))); err == nil {
					_ = pprof.Lookup(p).WriteTo(h, 0)
					_ = h.Close()
				}
			}
		}()
	}

	var opts []tf6server.ServeOpt
	if debug {
		opts = append(opts, tf6server.WithManagedDebug())
	}
	newServer := provider.NewServer(version)
	err := tf6server.Serve("registry.terraform.io/quotaworks/hyperpod", func() tfprotov6.ProviderServer {
		s, err := newServer()
		if err != nil {
			log.Fatal(err.Error())
		}
		return s
	}, opts...)
	if err != nil {
		log.Print(err.Error())
		pprof.StopCPUProfile()
		os.Exit(1)
	}
}

// silenceUnreadLogs turns the provider's and the plugin SDK's logging off when Terraform will
// discard it anyway. Terraform shows provider logs only when TF_LOG or TF_LOG_PROVIDER is set,
// and the provider inherits Terraform's environment; without either, the SDK still formats
// every TRACE line as JSON for Terraform to drop, which costs a quarter of the provider's CPU in
// a plan of a few hundred resources. The SDK's subsystems (the framework's, the protocol's)
// decide whether to build a line before their logger drops it, from their own variables: with
// those unset, building the framework's lines was 7 % of the CPU of a plan of new resources.
// Explicit TF_LOG_SDK* or TF_LOG_PROVIDER_* settings win.
func silenceUnreadLogs() {
	for _, v := range []string{"TF_LOG", "TF_LOG_PROVIDER"} {
		if lvl := os.Getenv(v); lvl != "" && !strings.EqualFold(lvl, "off") {
			return
		}
	}
	for _, v := range []string{"TF_LOG_SDK", "TF_LOG_SDK_FRAMEWORK", "TF_LOG_SDK_PROTO", "TF_LOG_PROVIDER_HYPERPOD"} {
		if _, set := os.LookupEnv(v); !set {
			_ = os.Setenv(v, "OFF")
		}
	}
}
