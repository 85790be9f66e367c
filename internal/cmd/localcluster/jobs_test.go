package main

import (
	"flag"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/localcluster"
)

func parseJobsFlags(t *testing.T, args ...string) jobsOptions {
	t.Helper()
	fs := flag.NewFlagSet("localcluster jobs", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var o jobsOptions
	o.register(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatalf("%v: %v", args, err)
	}
	return o
}

func TestJobsFlags(t *testing.T) {
	tests := []struct {
		args    []string
		wantErr string // "" when valid
	}{
		{[]string{"--file", "jobs.yaml"}, ""},
		{[]string{"--file", "jobs.yaml", "--submit"}, ""},
		{[]string{"--file", "jobs.yaml", "--delete", "--timeout", "5s"}, ""},
		{[]string{"--submit"}, "--file is required"},
		{[]string{"--file", "jobs.yaml", "--submit", "--delete"}, "--submit and --delete exclude each other"},
		{[]string{"--file", "jobs.yaml", "--timeout", "0s"}, "--timeout must be positive"},
	}
	for _, tt := range tests {
		err := parseJobsFlags(t, tt.args...).validate()
		switch {
		case tt.wantErr == "" && err != nil:
			t.Errorf("%v: %v", tt.args, err)
		case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
			t.Errorf("%v: error %v, want one saying %q", tt.args, err, tt.wantErr)
		}
	}
	if o := parseJobsFlags(t, "--file", "jobs.yaml"); o.timeout != 60*time.Second || o.submit || o.delete {
		t.Errorf("defaults: %+v, want a 60s timeout and neither --submit nor --delete", o)
	}
}

// The jobs subcommand resolves its kubeconfig as queues does.
func TestKubeconfigPath(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("KUBE_CONFIG_PATH", "")
	if got, want := kubeconfigPath(dir, ""), filepath.Join(dir, localcluster.KubeconfigFile); got != want {
		t.Errorf("no flag, no variable: %s, want %s", got, want)
	}
	t.Setenv("KUBE_CONFIG_PATH", "/from/env")
	if got := kubeconfigPath(dir, ""); got != "/from/env" {
		t.Errorf("$KUBE_CONFIG_PATH: %s", got)
	}
	if got := kubeconfigPath(dir, "/from/flag"); got != "/from/flag" {
		t.Errorf("--kubeconfig: %s", got)
	}
	t.Setenv("HOME", dir)
	if got, want := kubeconfigPath("", "~/kc"), filepath.Join(dir, "kc"); got != want {
		t.Errorf("~/ not expanded: %s, want %s", got, want)
	}
}

func TestJobsMissingKubeconfig(t *testing.T) {
	t.Setenv("KUBE_CONFIG_PATH", "")
	t.Setenv("KUBE_CTX", "")
	dir := t.TempDir()
	file := filepath.Join("..", "..", "..", "examples", "quickstart", "jobs.yaml")
	err := jobs(dir, jobsOptions{file: file, timeout: time.Second}, io.Discard)
	if err == nil || !strings.Contains(err.Error(), filepath.Join(dir, localcluster.KubeconfigFile)) {
		t.Errorf("without a kubeconfig: %v, want an error naming %s", err, filepath.Join(dir, localcluster.KubeconfigFile))
	}
}
