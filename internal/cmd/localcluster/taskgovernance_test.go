package main

import (
	"os"
	"path/filepath"
	"testing"
)

func TestWorkDir(t *testing.T) {
	for _, tc := range []struct {
		name           string
		flag           string
		taskGovernance bool
		want           string
	}{
		{"default", "", false, defaultDir},
		{"task governance: a directory of its own", "", true, defaultTaskGovernanceDir},
		{"--dir wins", "x", false, "x"},
		{"--dir wins with task governance", "x", true, "x"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := workDir(tc.flag, tc.taskGovernance); got != tc.want {
				t.Errorf("workDir(%q, %v) = %q, want %q", tc.flag, tc.taskGovernance, got, tc.want)
			}
		})
	}
	if defaultDir == defaultTaskGovernanceDir {
		t.Error("the two modes share a default work directory")
	}
}

// up recognizes the mode of a running serve process from the command line it gave it.
func TestServesTaskGovernance(t *testing.T) {
	for _, taskGovernance := range []bool{false, true} {
		args := append([]string{"/bin/localcluster"}, serveArgs("/d", "/a", taskGovernance)...)
		if got := servesTaskGovernance(args); got != taskGovernance {
			t.Errorf("servesTaskGovernance(%q) = %v, want %v", args, got, taskGovernance)
		}
	}
	// A path that merely contains the flag's name is not the flag.
	if servesTaskGovernance([]string{"/bin/localcluster", "serve", "--dir", "/x/task-governance"}) {
		t.Error("a --dir value was taken for the flag")
	}
}

func TestRemoveRunFiles(t *testing.T) {
	dir := t.TempDir()
	keep := filepath.Join(dir, logFile)
	for _, name := range []string{pidFile, "kubeconfig", providerFile, logFile} {
		if err := os.WriteFile(filepath.Join(dir, name), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	removeRunFiles(dir)
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 || filepath.Join(dir, entries[0].Name()) != keep {
		t.Errorf("left %v, want only the log %s", entries, logFile)
	}
}
