package provider

// A harness that runs the real terraform (or tofu) CLI against the provider served in this
// process, for what plugin-testing cannot do: kill terraform mid-apply, read the state after a
// failed apply, and run commands while the API server is away. It uses the binary
// plugin-testing would use (TF_ACC_TERRAFORM_PATH, else terraform on PATH) and registers the
// provider under the same address (TF_ACC_PROVIDER_HOST, default registry.terraform.io,
// namespace hashicorp), through TF_REATTACH_PROVIDERS as plugin-testing does.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6/tf6server"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/acctest"
)

// tfCLI is a working directory and the CLI that runs in it.
type tfCLI struct {
	t       *testing.T
	bin     string
	dir     string
	address string // the provider's address, e.g. registry.terraform.io/hashicorp/hyperpod
}

// newTFCLI returns a harness with a fresh working directory.
func newTFCLI(t *testing.T) *tfCLI {
	t.Helper()
	bin := os.Getenv("TF_ACC_TERRAFORM_PATH")
	if bin == "" {
		p, err := exec.LookPath("terraform")
		if err != nil {
			t.Fatalf("no terraform CLI: set TF_ACC_TERRAFORM_PATH or put terraform on PATH (%v)", err)
		}
		bin = p
	}
	host := strings.TrimSuffix(os.Getenv("TF_ACC_PROVIDER_HOST"), "/")
	if host == "" {
		host = "registry.terraform.io"
	}
	return &tfCLI{t: t, bin: bin, dir: t.TempDir(), address: host + "/hashicorp/hyperpod"}
}

// writeConfig replaces main.tf.
func (c *tfCLI) writeConfig(hcl string) {
	c.t.Helper()
	if err := os.WriteFile(filepath.Join(c.dir, "main.tf"), []byte(hcl), 0o600); err != nil {
		c.t.Fatal(err)
	}
}

// env is the CLI's environment: only what it needs, so that TF_VAR_*, TF_CLI_ARGS* or a
// TF_REATTACH_PROVIDERS of the caller cannot change what the tests run. The provider itself
// runs in this process and reads this process's KUBE_* variables; they are passed on anyway
// for anything the CLI starts.
func (c *tfCLI) env(reattach string) []string {
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		// TF_CLI_CONFIG_FILE: OpenTofu runs with an empty one (see GNUmakefile); TF_LOG*: for
		// debugging a run.
		switch {
		case name == "PATH", name == "HOME", name == "TMPDIR", name == "USER", name == "TF_CLI_CONFIG_FILE",
			name == "TF_LOG", name == "TF_LOG_CORE", name == "TF_LOG_PATH", strings.HasPrefix(name, "KUBE_"):
			env = append(env, kv)
		}
	}
	return append(env, "TF_IN_AUTOMATION=1", "CHECKPOINT_DISABLE=1", "TF_REATTACH_PROVIDERS="+reattach)
}

// tfResult is what one CLI command did.
type tfResult struct {
	args           []string
	exitCode       int // -1 when killed by a signal
	killed         bool
	timedOut       bool
	stdout, stderr string
	took           time.Duration
}

func (r tfResult) String() string {
	return fmt.Sprintf("%s (exit %d after %s)\n--- stdout ---\n%s\n--- stderr ---\n%s",
		strings.Join(r.args, " "), r.exitCode, r.took.Round(time.Millisecond), r.stdout, r.stderr)
}

// lockedBuffer lets the test read a command's output while it runs.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// tfProcess is a CLI command that is running, with its own provider server.
type tfProcess struct {
	c              *tfCLI
	args           []string
	cmd            *exec.Cmd
	ctx            context.Context
	cancel         context.CancelFunc
	server         *servedProvider
	stdout, stderr *lockedBuffer
	started        time.Time
	done           chan struct{}
	waitErr        error
	killed         atomic.Bool
}

// start serves a fresh provider (as plugin-testing does for every command) and starts the CLI
// with args; the command is killed when timeout passes.
func (c *tfCLI) start(timeout time.Duration, args ...string) *tfProcess {
	c.t.Helper()
	server, err := serveProvider(c.t, c.address)
	if err != nil {
		c.t.Fatalf("serving the provider: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	cmd := exec.CommandContext(ctx, c.bin, args...)
	cmd.Dir = c.dir
	cmd.Env = c.env(server.reattach)
	p := &tfProcess{
		c: c, args: args, cmd: cmd, ctx: ctx, cancel: cancel, server: server,
		stdout: &lockedBuffer{}, stderr: &lockedBuffer{}, done: make(chan struct{}),
	}
	cmd.Stdout, cmd.Stderr = p.stdout, p.stderr
	p.started = time.Now()
	if err := cmd.Start(); err != nil {
		cancel()
		server.stop(c.t)
		c.t.Fatalf("starting %s %s: %v", c.bin, strings.Join(args, " "), err)
	}
	go func() {
		p.waitErr = cmd.Wait()
		close(p.done)
	}()
	return p
}

// running reports whether the command has not exited yet.
func (p *tfProcess) running() bool {
	select {
	case <-p.done:
		return false
	default:
		return true
	}
}

// kill sends SIGKILL to the CLI: it gets no chance to write state or release anything.
func (p *tfProcess) kill() error {
	p.killed.Store(true)
	return p.cmd.Process.Signal(syscall.SIGKILL)
}

// wait waits for the command, then for the provider's in-flight applies (after a kill they run
// on with cancelled contexts, as a provider process outliving a killed terraform does), and
// stops the provider server.
func (p *tfProcess) wait() tfResult {
	t := p.c.t
	t.Helper()
	<-p.done
	took := time.Since(p.started)
	timedOut := p.ctx.Err() == context.DeadlineExceeded
	p.cancel()
	p.server.stop(t)
	r := tfResult{
		args: p.args, exitCode: p.cmd.ProcessState.ExitCode(), killed: p.killed.Load(), timedOut: timedOut,
		stdout: p.stdout.String(), stderr: p.stderr.String(), took: took,
	}
	var exitErr *exec.ExitError
	if p.waitErr != nil && !errors.As(p.waitErr, &exitErr) {
		t.Fatalf("%s: %v", strings.Join(p.args, " "), p.waitErr)
	}
	if timedOut {
		t.Errorf("%s did not finish in time and was killed", strings.Join(p.args, " "))
	}
	return r
}

// run runs one command to its end.
func (c *tfCLI) run(timeout time.Duration, args ...string) tfResult {
	c.t.Helper()
	return c.start(timeout, args...).wait()
}

// mustRun runs one command and fails the test unless it exits 0.
func (c *tfCLI) mustRun(timeout time.Duration, args ...string) tfResult {
	c.t.Helper()
	r := c.run(timeout, args...)
	if r.exitCode != 0 {
		c.t.Fatalf("%s", r)
	}
	return r
}

func (c *tfCLI) init() tfResult {
	c.t.Helper()
	return c.mustRun(2*time.Minute, "init", "-input=false", "-no-color")
}

// apply runs apply -auto-approve with the machine-readable UI (see parseTFJSONLines).
func (c *tfCLI) apply(timeout time.Duration) tfResult {
	c.t.Helper()
	return c.run(timeout, "apply", "-auto-approve", "-input=false", "-no-color", "-json")
}

// plan runs plan -detailed-exitcode: 0 no changes, 1 error, 2 changes.
func (c *tfCLI) plan(timeout time.Duration) tfResult {
	c.t.Helper()
	return c.run(timeout, "plan", "-detailed-exitcode", "-input=false", "-no-color")
}

func (c *tfCLI) destroy(timeout time.Duration) tfResult {
	c.t.Helper()
	return c.run(timeout, "destroy", "-auto-approve", "-input=false", "-no-color")
}

// tfStateResource is one resource instance of `show -json`.
type tfStateResource struct {
	Address string         `json:"address"`
	Mode    string         `json:"mode"`
	Type    string         `json:"type"`
	Name    string         `json:"name"`
	Index   any            `json:"index"`
	Tainted bool           `json:"tainted"`
	Values  map[string]any `json:"values"`
}

func (r tfStateResource) str(attr string) string {
	s, _ := r.Values[attr].(string)
	return s
}

// show returns the managed resources of the state, by address.
func (c *tfCLI) show() map[string]tfStateResource {
	c.t.Helper()
	r := c.mustRun(time.Minute, "show", "-json", "-no-color")
	var doc struct {
		Values *struct {
			RootModule struct {
				Resources []tfStateResource `json:"resources"`
			} `json:"root_module"`
		} `json:"values"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil {
		c.t.Fatalf("show -json: %v\n%s", err, r)
	}
	out := map[string]tfStateResource{}
	if doc.Values == nil {
		return out
	}
	for _, res := range doc.Values.RootModule.Resources {
		if res.Mode != "managed" {
			continue
		}
		if _, dup := out[res.Address]; dup {
			c.t.Fatalf("show -json lists %s twice", res.Address)
		}
		out[res.Address] = res
	}
	return out
}

// tfDiagnostic is a diagnostic of the machine-readable UI (-json).
type tfDiagnostic struct {
	Severity string `json:"severity"`
	Summary  string `json:"summary"`
	Detail   string `json:"detail"`
	Address  string `json:"address"`
}

// tfUIMessage is one line of the machine-readable UI.
type tfUIMessage struct {
	Level      string        `json:"@level"`
	Message    string        `json:"@message"`
	Type       string        `json:"type"`
	Diagnostic *tfDiagnostic `json:"diagnostic"`
	Hook       struct {
		Resource struct {
			Addr string `json:"addr"`
		} `json:"resource"`
		Action string `json:"action"`
	} `json:"hook"`
}

// parseTFJSONLines reads the machine-readable UI of apply -json: its diagnostics, and the
// addresses whose apply completed (apply_complete).
func parseTFJSONLines(stdout string) (diags []tfDiagnostic, completed map[string]bool) {
	completed = map[string]bool{}
	sc := bufio.NewScanner(strings.NewReader(stdout))
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		var m tfUIMessage
		if json.Unmarshal(sc.Bytes(), &m) != nil {
			continue // not a UI message (OpenTofu may print warnings about its CLI configuration)
		}
		switch m.Type {
		case "diagnostic":
			if m.Diagnostic != nil {
				diags = append(diags, *m.Diagnostic)
			}
		case "apply_complete":
			completed[m.Hook.Resource.Addr] = true
		}
	}
	return diags, completed
}

// servedProvider is the provider served for one CLI command.
type servedProvider struct {
	reattach string
	cancel   context.CancelFunc
	closed   chan struct{}
	applies  *inflight
}

// serveProvider serves the server testAccProtoV6ProviderFactories["hyperpod"] builds, in debug
// (reattach) mode like plugin-testing, and returns the TF_REATTACH_PROVIDERS value for it.
// plugin-testing serves through terraform-plugin-sdk's plugin.DebugServe, which wraps this same
// tf6server option.
func serveProvider(t *testing.T, address string) (*servedProvider, error) {
	s, err := testAccProtoV6ProviderFactories["hyperpod"]()
	if err != nil {
		return nil, err
	}
	counted := &countingServer{ProviderServer: s, applies: &inflight{}}
	ctx, cancel := context.WithCancel(context.Background())
	reattachCh := make(chan *plugin.ReattachConfig)
	closed := make(chan struct{})
	serveErr := make(chan error, 1)
	go func() {
		serveErr <- tf6server.Serve(address, func() tfprotov6.ProviderServer { return counted },
			tf6server.WithDebug(ctx, reattachCh, closed),
			tf6server.WithGoPluginLogger(hclog.NewNullLogger()),
			// The provider's logs go where plugin-testing sends them (TF_LOG_PATH_MASK,
			// TF_ACC_LOG_PATH), not to the test's stderr.
			tf6server.WithLoggingSink(t),
		)
	}()
	var rc *plugin.ReattachConfig
	select {
	case rc = <-reattachCh:
	case err := <-serveErr:
		cancel()
		return nil, fmt.Errorf("provider server ended before it listened: %v", err)
	case <-time.After(time.Minute):
		cancel()
		return nil, errors.New("timeout waiting for the provider server's reattach configuration")
	}
	type addr struct{ Network, String string }
	type reattachConfig struct {
		Protocol        string
		ProtocolVersion int
		Pid             int
		Test            bool
		Addr            addr
	}
	b, err := json.Marshal(map[string]reattachConfig{address: {
		Protocol: string(rc.Protocol), ProtocolVersion: rc.ProtocolVersion, Pid: rc.Pid, Test: rc.Test,
		Addr: addr{Network: rc.Addr.Network(), String: rc.Addr.String()},
	}})
	if err != nil {
		cancel()
		return nil, err
	}
	return &servedProvider{reattach: string(b), cancel: cancel, closed: closed, applies: counted.applies}, nil
}

// stop waits for applies still running (bounded), then stops the server.
func (s *servedProvider) stop(t *testing.T) {
	t.Helper()
	if n, took, err := s.applies.wait(3 * time.Minute); n > 0 {
		if err != nil {
			t.Errorf("%d provider applies were running when terraform ended: %v", n, err)
		} else {
			t.Logf("waited %s for %d provider applies that outlived terraform", took.Round(time.Millisecond), n)
		}
	}
	s.cancel()
	select {
	case <-s.closed:
	case <-time.After(time.Minute):
		t.Errorf("the provider server did not stop within a minute")
	}
}

// countingServer counts the ApplyResourceChange calls in progress: the only RPC that writes.
type countingServer struct {
	tfprotov6.ProviderServer
	applies *inflight
}

func (s *countingServer) ApplyResourceChange(ctx context.Context, req *tfprotov6.ApplyResourceChangeRequest) (*tfprotov6.ApplyResourceChangeResponse, error) {
	s.applies.add(1)
	defer s.applies.add(-1)
	return s.ProviderServer.ApplyResourceChange(ctx, req)
}

// ListResource and ValidateListResourceConfig reach the provider's list resources (terraform
// query), which tfprotov6.ProviderServer does not carry.
func (s *countingServer) ListResource(ctx context.Context, req *tfprotov6.ListResourceRequest) (*tfprotov6.ListResourceServerStream, error) {
	return s.ProviderServer.(tfprotov6.ListResourceServer).ListResource(ctx, req)
}

func (s *countingServer) ValidateListResourceConfig(ctx context.Context, req *tfprotov6.ValidateListResourceConfigRequest) (*tfprotov6.ValidateListResourceConfigResponse, error) {
	return s.ProviderServer.(tfprotov6.ListResourceServer).ValidateListResourceConfig(ctx, req)
}

type inflight struct {
	mu sync.Mutex
	n  int
}

func (f *inflight) add(d int) {
	f.mu.Lock()
	f.n += d
	f.mu.Unlock()
}

func (f *inflight) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.n
}

// wait waits until nothing is in flight; it returns how many were when it started.
func (f *inflight) wait(limit time.Duration) (n int, took time.Duration, err error) {
	start := time.Now()
	n = f.count()
	err = acctest.Eventually(context.Background(), limit, "the provider's applies in flight ended",
		func(context.Context) (bool, string, error) {
			left := f.count()
			return left == 0, fmt.Sprintf("%d still running", left), nil
		})
	return n, time.Since(start), err
}
