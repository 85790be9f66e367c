package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
)

// The bench binary doubles as the provider wrapper: a copy of it named
// terraform-provider-hyperpod sits in the dev_overrides directory, and Terraform's
// environment carries these two variables to it.
const (
	envWrapRealProvider = "HYPERPOD_BENCH_REAL_PROVIDER" // path of the provider the wrapper runs
	envWrapRSSDir       = "HYPERPOD_BENCH_RSS_DIR"       // where it writes the child's peak RSS
)

// wrapperMode reports whether this process was started by Terraform as the provider wrapper.
func wrapperMode() bool { return os.Getenv(envWrapRealProvider) != "" }

// runProviderWrapper runs the real provider as a child with the same stdio and environment
// (go-plugin's handshake goes over stdout), forwards signals, and when the child exits
// writes its peak RSS in bytes to $HYPERPOD_BENCH_RSS_DIR/<child pid>. It returns the exit code.
func runProviderWrapper() int {
	// Pdeathsig belongs to the thread that started the child: keep that thread alive.
	runtime.LockOSThread()
	real, dir := os.Getenv(envWrapRealProvider), os.Getenv(envWrapRSSDir)
	cmd := exec.Command(real, os.Args[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.SysProcAttr = wrapperSysProcAttr()

	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT)
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(os.Stderr, "bench provider wrapper: starting %s: %v\n", real, err)
		return 1
	}
	go func() {
		for s := range sigs {
			_ = cmd.Process.Signal(s)
		}
	}()
	err := cmd.Wait()
	signal.Stop(sigs)

	if dir != "" && cmd.ProcessState != nil {
		if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
			data := strconv.FormatInt(maxRSSBytes(ru), 10) + "\n"
			path := filepath.Join(dir, strconv.Itoa(cmd.Process.Pid))
			if werr := os.WriteFile(path, []byte(data), 0o644); werr != nil {
				fmt.Fprintf(os.Stderr, "bench provider wrapper: %v\n", werr)
			}
		}
	}
	var exitErr *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &exitErr):
		if ws, ok := exitErr.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return 128 + int(ws.Signal())
		}
		return exitErr.ExitCode()
	default:
		fmt.Fprintf(os.Stderr, "bench provider wrapper: %v\n", err)
		return 1
	}
}

// peakRSS reads what the wrappers of one command wrote: the largest peak RSS in bytes and the
// number of provider processes.
func peakRSS(dir string) (maxBytes int64, procs int, err error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return 0, 0, err
	}
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			return 0, 0, err
		}
		n, err := strconv.ParseInt(strings.TrimSpace(string(data)), 10, 64)
		if err != nil {
			return 0, 0, fmt.Errorf("peak RSS file %s: %w", e.Name(), err)
		}
		procs++
		maxBytes = max(maxBytes, n)
	}
	return maxBytes, procs, nil
}
