package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/localcluster"
)

// Terraform arguments of the measured commands: no input, no colour, default parallelism.
var (
	argsPlan    = []string{"plan", "-input=false", "-no-color", "-detailed-exitcode"}
	argsApply   = []string{"apply", "-auto-approve", "-input=false", "-no-color"}
	argsRefresh = []string{"apply", "-refresh-only", "-auto-approve", "-input=false", "-no-color"}
	argsDestroy = []string{"destroy", "-auto-approve", "-input=false", "-no-color"}
)

// Exit codes of plan -detailed-exitcode.
const (
	exitNoChanges = 0
	exitChanges   = 2
)

// tfRunner runs Terraform with the bench's environment and keeps each command's output in
// logDir.
type tfRunner struct {
	terraform string
	env       []string
	logDir    string
	timeout   time.Duration
	seq       int
	// lastCPU is the user and system CPU time of the last command: Terraform's and that of the
	// processes it waited for (the providers). Unlike wall time, other work on the machine
	// hardly moves it.
	lastCPU time.Duration
	// lastLog is the file that holds the last command's output.
	lastLog string
}

// run runs terraform args in dir and returns its wall time. An exit code other than
// wantExit is an error that carries the tail of Terraform's output.
func (r *tfRunner) run(ctx context.Context, dir, label string, wantExit int, args ...string) (time.Duration, error) {
	r.seq++
	logPath := filepath.Join(r.logDir, fmt.Sprintf("%04d-%s.log", r.seq, strings.ReplaceAll(label, " ", "-")))
	logFile, err := os.Create(logPath)
	if err != nil {
		return 0, err
	}
	defer logFile.Close()
	r.lastLog = logPath

	ctx, cancel := context.WithTimeout(ctx, r.timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, r.terraform, args...)
	cmd.Dir = dir
	cmd.Env = r.env
	cmd.Stdout, cmd.Stderr = logFile, logFile
	// Its own process group, so a Ctrl-C reaches Terraform once (from us, as an interrupt
	// it handles gracefully) rather than twice (which makes it exit at once).
	cmd.SysProcAttr = terraformSysProcAttr()
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	cmd.WaitDelay = time.Minute

	start := time.Now()
	err = cmd.Run()
	wall := time.Since(start)
	r.lastCPU = 0
	if cmd.ProcessState != nil {
		r.lastCPU = cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	}

	code := 0
	var exitErr *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &exitErr):
		code = exitErr.ExitCode()
	default:
		return wall, fmt.Errorf("%s: terraform %s: %w", label, strings.Join(args, " "), err)
	}
	if ctx.Err() != nil {
		why := "interrupted"
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			why = fmt.Sprintf("timed out after %s (-command-timeout)", r.timeout)
		}
		return wall, fmt.Errorf("%s: terraform %s %s; last output (%s):\n%s", label, strings.Join(args, " "), why, logPath, localcluster.TailFile(logPath, 30))
	}
	if code != wantExit {
		what := fmt.Sprintf("exited with %d, want %d", code, wantExit)
		switch {
		case slices.Contains(args, "-detailed-exitcode") && code == exitChanges:
			what = "planned changes where none were expected (exit 2)"
		case slices.Contains(args, "-detailed-exitcode") && wantExit == exitChanges && code == exitNoChanges:
			what = "planned no changes where changes were expected (exit 0)"
		}
		return wall, fmt.Errorf("%s: terraform %s %s; last output (%s):\n%s", label, strings.Join(args, " "), what, logPath, localcluster.TailFile(logPath, 30))
	}
	return wall, nil
}
