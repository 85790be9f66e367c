package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/localcluster"
)

// machineInfo says where and on what the figures were taken.
type machineInfo struct {
	OS               string `json:"os"`
	Arch             string `json:"arch"`
	CPUs             int    `json:"cpus"`
	CPUModel         string `json:"cpu_model,omitempty"`
	MemoryTotal      string `json:"memory_total,omitempty"`
	GoVersion        string `json:"go_version"`
	TerraformVersion string `json:"terraform_version"`
	// QueryTerraformVersion is the Terraform of the query scenario, when it is another one.
	QueryTerraformVersion string `json:"query_terraform_version,omitempty"`
	ProviderCommit        string `json:"provider_commit"`
	KubernetesVersion     string `json:"kubernetes_version"`
	EtcdVersion           string `json:"etcd_version"`
	KueueVersion          string `json:"kueue_version"`
}

func collectMachineInfo(ctx context.Context, repo, terraform string) machineInfo {
	m := machineInfo{
		OS: runtime.GOOS, Arch: runtime.GOARCH, CPUs: runtime.NumCPU(),
		CPUModel:          procField("/proc/cpuinfo", "model name"),
		MemoryTotal:       memTotal(procField("/proc/meminfo", "MemTotal")),
		GoVersion:         commandOutput(ctx, repo, "go", "env", "GOVERSION"),
		ProviderCommit:    gitCommit(ctx, repo),
		KubernetesVersion: localcluster.KubernetesVersion,
		EtcdVersion:       localcluster.EtcdVersion,
	}
	if dir, err := localcluster.DefaultAssetsDir(); err == nil {
		m.KueueVersion = localcluster.KueueVersionOf(dir)
	}
	m.TerraformVersion = terraformVersion(ctx, repo, terraform)
	return m
}

// terraformVersion is what `terraform version -json` says of itself, "" when it does not.
func terraformVersion(ctx context.Context, repo, terraform string) string {
	var v struct {
		Version string `json:"terraform_version"`
	}
	if err := json.Unmarshal([]byte(commandOutput(ctx, repo, terraform, "version", "-json")), &v); err != nil {
		return ""
	}
	return v.Version
}

// gitCommit is HEAD, with "+dirty" when the work tree has uncommitted changes (the
// provider measured is the work tree, not the commit).
func gitCommit(ctx context.Context, repo string) string {
	head := commandOutput(ctx, repo, "git", "rev-parse", "HEAD")
	if head == "" {
		return "unknown"
	}
	if commandOutput(ctx, repo, "git", "status", "--porcelain", "--untracked-files=no") != "" {
		head += "+dirty"
	}
	return head
}

// commandOutput is the trimmed stdout of a command, "" on any error.
func commandOutput(ctx context.Context, dir, name string, args ...string) string {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Env = childEnv(os.Environ(), "CHECKPOINT_DISABLE=1")
	out, err := cmd.Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}

// procField is the value of the first "key: value" line of a /proc file ("" elsewhere).
func procField(path, key string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if ok && strings.TrimSpace(k) == key {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// memTotal turns /proc/meminfo's "24683584 kB" into "23.5 GiB".
func memTotal(s string) string {
	kb, err := strconv.ParseFloat(strings.TrimSuffix(s, " kB"), 64)
	if err != nil {
		return s
	}
	return fmt.Sprintf("%.1f GiB", kb/(1<<20))
}
