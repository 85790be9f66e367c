package main

import (
	"slices"
	"testing"
)

func TestChildEnv(t *testing.T) {
	in := []string{
		"PATH=/usr/bin", "HOME=/root", "GOFLAGS=-mod=mod",
		"KUBE_CONFIG_PATH=/home/me/.kube/config", "KUBE_HOST=https://prod", "KUBECONFIG=/x", "KUBE_CTX=prod",
		"TF_CLI_CONFIG_FILE=/home/me/.terraformrc", "TF_CLI_ARGS_plan=-parallelism=1", "TF_LOG=trace",
		"TF_REATTACH_PROVIDERS={}", envAdmissionPreview + "=false", "TF_DATA_DIR=/tmp/x", "TF_VAR_team=a",
		envWrapRealProvider + "=/p", "HYPERPOD_CONTROLPLANE_DIR=/assets",
		"AWS_PROFILE=prod", "AWS_ACCESS_KEY_ID=AKIA", "AWS_ENDPOINT_URL_SAGEMAKER=https://api.sagemaker.us-west-2.amazonaws.com",
	}
	got := childEnv(in, "TF_CLI_CONFIG_FILE=/tmp/bench/terraformrc", "TF_IN_AUTOMATION=1")
	want := []string{
		"PATH=/usr/bin", "HOME=/root", "GOFLAGS=-mod=mod", "TF_VAR_team=a", "HYPERPOD_CONTROLPLANE_DIR=/assets",
		"TF_CLI_CONFIG_FILE=/tmp/bench/terraformrc", "TF_IN_AUTOMATION=1",
	}
	if !slices.Equal(got, want) {
		t.Errorf("childEnv =\n  %q\nwant\n  %q", got, want)
	}
}
