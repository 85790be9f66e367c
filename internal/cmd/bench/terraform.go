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

// resolveQueryTerraform is the Terraform that runs the query scenario: flagValue (a path, or
// "none" for no scenario: ""), else terraform when its version is 1.14 or later, else the one
// scripts/terraform-assets.sh prints, which it builds once (a cold build takes minutes).
func resolveQueryTerraform(ctx context.Context, repo, flagValue, terraform, version string) (string, error) {
	switch {
	case flagValue == "none":
		return "", nil
	case flagValue != "":
		return exec.LookPath(flagValue)
	case hasQuery(version):
		return terraform, nil
	}
	cmd := exec.CommandContext(ctx, filepath.Join(repo, "scripts", "terraform-assets.sh"))
	cmd.Dir, cmd.Stderr = repo, os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("scripts/terraform-assets.sh (a Terraform with terraform query, for the %s scenario; "+
			"-query-terraform none skips it): %w", opQuery, err)
	}
	return strings.TrimSpace(string(out)), nil
}

// hasQuery reports whether Terraform version v (e.g. "1.15.0") has `terraform query` (1.14).
func hasQuery(v string) bool {
	var major, minor int
	if _, err := fmt.Sscanf(v, "%d.%d", &major, &minor); err != nil {
		return false
	}
	return major > 1 || (major == 1 && minor >= 14)
}
