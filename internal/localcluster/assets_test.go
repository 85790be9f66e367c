package localcluster

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeJobCRDs puts the job CRDs scripts/controlplane-assets.sh copies into an assets directory.
func writeJobCRDs(t *testing.T, dir string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(dir, JobCRDsDir), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, JobCRDsDir, PyTorchJobCRD), nil, 0o644); err != nil {
		t.Fatal(err)
	}
}

// An assets directory made before the PyTorchJob CRD was copied into it is refused with the
// command that completes it.
func TestCheckAssetsWithoutJobCRDs(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{APIServerBinary, EtcdBinary} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(filepath.Join(dir, CRDsDir), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, CRDsDir, "kueue.x-k8s.io_clusterqueues.yaml"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	err := CheckAssets(dir)
	if !errors.Is(err, ErrAssetsMissing) {
		t.Fatalf("CheckAssets without crds-jobs/: %v, want ErrAssetsMissing", err)
	}
	for _, want := range []string{"has no crds-jobs/kubeflow.org_pytorchjobs.yaml;", "scripts/controlplane-assets.sh"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("CheckAssets without crds-jobs/: %q lacks %q", err, want)
		}
	}

	writeJobCRDs(t, dir)
	if err := CheckAssets(dir); err != nil {
		t.Errorf("CheckAssets with crds-jobs/: %v", err)
	}
}
