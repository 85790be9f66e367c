package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/sagemakeremulator/addon"
)

const (
	// taskGovernanceFlag makes the control plane a HyperPod cluster with the task-governance add-on.
	taskGovernanceFlag = "task-governance"
	// providerFile holds the provider block of the SageMaker path while such a cluster runs.
	providerFile = "provider.hcl"

	defaultDir               = ".cache/localcluster"
	defaultTaskGovernanceDir = ".cache/localcluster-tg"
)

// workDir is the --dir flag's value, else the default of the mode. The add-on's mark makes the
// provider's Kubernetes path refuse to write to a cluster, so the two modes never share one.
func workDir(flagValue string, taskGovernance bool) string {
	switch {
	case flagValue != "":
		return flagValue
	case taskGovernance:
		return defaultTaskGovernanceDir
	default:
		return defaultDir
	}
}

// startTaskGovernance makes the control plane of kubeconfig a cluster with the task-governance
// add-on (its mark, and the SageMaker API emulator with the add-on's stand-in as writer) and
// writes the provider block that reaches it to dir. stop closes the emulator, whose objects live
// only in memory, and removes the block.
func startTaskGovernance(ctx context.Context, dir, kubeconfig string) (stop func(), _ error) {
	emu, conn, err := addon.Start(ctx, kubeconfig)
	if err != nil {
		return nil, err
	}
	path := filepath.Join(dir, providerFile)
	stop = func() {
		_ = emu.Close()
		_ = os.Remove(path)
	}
	block := "# The SageMaker path: quotas and priority classes go to the SageMaker API, here the emulator that\n" +
		"# `localcluster up --task-governance` serves beside this control plane until `localcluster down`.\n" +
		conn.ProviderHCL()
	// Written whole or not at all: up waits for the file, then the demo reads it.
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(block), 0o644); err != nil {
		stop()
		return nil, err
	}
	if err := os.Rename(tmp, path); err != nil {
		stop()
		return nil, err
	}
	fmt.Fprintf(os.Stderr, "%s SageMaker API emulator at %s for %s\n", stamp(), conn.Endpoint, conn.ClusterARN)
	return stop, nil
}

// servesTaskGovernance reports whether a serve process, by its command line args, runs the
// add-on (up passes the flag on as --task-governance).
func servesTaskGovernance(args []string) bool {
	return slices.Contains(args, "--"+taskGovernanceFlag)
}

// printTaskGovernance prints the provider block of the cluster in dir.
func printTaskGovernance(dir string) {
	path := filepath.Join(dir, providerFile)
	block, err := os.ReadFile(path)
	if err != nil {
		return
	}
	fmt.Printf("  task governance: the SageMaker API emulator writes Kueue's objects as the add-on would;\n")
	fmt.Printf("  the Kubernetes path refuses to write here. Provider block (%s):\n", path)
	for _, line := range strings.Split(strings.TrimSpace(string(block)), "\n") {
		fmt.Println(strings.TrimRight("    "+line, " "))
	}
	fmt.Println()
}
