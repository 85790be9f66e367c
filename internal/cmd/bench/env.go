package main

import (
	"os"
	"strings"
)

// droppedEnv says whether a variable of the caller's environment must not reach Terraform,
// the provider or the bench's own clients: anything that could point them at another
// cluster (every KUBE* variable, KUBECONFIG included) or at an AWS account (every AWS_*
// variable: the SageMaker path talks to the emulator only), another provider binary, another
// CLI config or working state, change how Terraform runs (extra CLI arguments, logging), or turn
// the admission preview off behind the provider block's back.
func droppedEnv(name string) bool {
	switch {
	case strings.HasPrefix(name, "KUBE"), strings.HasPrefix(name, "AWS_"):
		return true
	case strings.HasPrefix(name, "TF_CLI_ARGS"), strings.HasPrefix(name, "TF_LOG"):
		return true
	case name == envWrapRealProvider, name == envWrapRSSDir, name == envAdmissionPreview:
		return true
	}
	switch name {
	case "TF_CLI_CONFIG_FILE", "TERRAFORM_CONFIG", "TF_REATTACH_PROVIDERS", "TF_DATA_DIR",
		"TF_WORKSPACE", "TF_INPUT", "TF_IN_AUTOMATION", "TF_PLUGIN_CACHE_DIR", "TF_APPEND_USER_AGENT",
		"TF_ACC", "CHECKPOINT_DISABLE":
		return true
	}
	return false
}

// envAdmissionPreview turns the provider's admission preview off like its provider setting.
const envAdmissionPreview = "HYPERPOD_ADMISSION_PREVIEW"

// childEnv is environ without the dropped variables, plus set (KEY=VALUE entries).
func childEnv(environ []string, set ...string) []string {
	out := make([]string, 0, len(environ)+len(set))
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		if !droppedEnv(name) {
			out = append(out, kv)
		}
	}
	return append(out, set...)
}

// unsetClusterEnv removes the KUBE* variables from this process too, so nothing the bench
// starts (client-go, envtest) can pick up another cluster.
func unsetClusterEnv() {
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(name, "KUBE") && !strings.HasPrefix(name, "KUBEBUILDER_") {
			_ = os.Unsetenv(name)
		}
	}
}
