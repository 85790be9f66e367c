package localcluster

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Versions of the local control plane. They name the assets directory and must match
// scripts/controlplane-assets.sh and tools/controlplane/go.mod.
const (
	KubernetesVersion = "v1.37.2"
	EtcdVersion       = "v3.7.0"
	// DefaultKueueVersion is the Kueue that AWS's task-governance add-on ships.
	DefaultKueueVersion = "v0.19.2"
	// OldestKueueVersion is the oldest Kueue the provider supports: the first to serve v1beta2,
	// and the last to store v1beta1.
	OldestKueueVersion = "v0.15.0"
)

// EnvKueueVersion picks the Kueue release of the default assets directory, for this package
// and for scripts/controlplane-assets.sh alike.
const EnvKueueVersion = "HYPERPOD_KUEUE_VERSION"

// KueueVersionFile names the file in an assets directory that holds its Kueue release.
const KueueVersionFile = "kueue-version"

// KueueVersionFromEnv is $HYPERPOD_KUEUE_VERSION, or DefaultKueueVersion when it is unset.
func KueueVersionFromEnv() string {
	if v := os.Getenv(EnvKueueVersion); v != "" {
		return v
	}
	return DefaultKueueVersion
}

// KueueVersionOf is the Kueue release an assets directory was prepared for: from its
// kueue-version file, else from a cache directory's name; "" when neither says.
func KueueVersionOf(dir string) string {
	if b, err := os.ReadFile(filepath.Join(dir, KueueVersionFile)); err == nil {
		return strings.TrimSpace(string(b))
	}
	if _, v, ok := strings.Cut(filepath.Base(dir), "_kueue-"); ok {
		return v
	}
	return ""
}

// EnvAssetsDir overrides the assets directory, for this package and for
// scripts/controlplane-assets.sh alike.
const EnvAssetsDir = "HYPERPOD_CONTROLPLANE_DIR"

// Names inside an assets directory.
const (
	APIServerBinary = "kube-apiserver"
	EtcdBinary      = "etcd"
	CRDsDir         = "crds"
	// JobCRDsDir holds the CRDs of the job kinds Kueue admits besides batch/v1 Jobs: the Kubeflow
	// Training Operator's PyTorchJob, which the HyperPod CLI submits.
	JobCRDsDir    = "crds-jobs"
	PyTorchJobCRD = "kubeflow.org_pytorchjobs.yaml"
)

// ErrAssetsMissing is wrapped by the errors of CheckAssets and AssetsDirFromEnv when the
// binaries or the CRDs have not been built or copied yet.
var ErrAssetsMissing = errors.New("local control plane assets missing")

// DefaultAssetsDir is the directory scripts/controlplane-assets.sh uses:
// $HYPERPOD_CONTROLPLANE_DIR when set, otherwise CachedAssetsDir(KueueVersionFromEnv()).
// The directory may not exist.
func DefaultAssetsDir() (string, error) {
	if d := os.Getenv(EnvAssetsDir); d != "" {
		return filepath.Abs(d)
	}
	return CachedAssetsDir(KueueVersionFromEnv())
}

// CachedAssetsDir is where scripts/controlplane-assets.sh keeps the assets of a Kueue release:
// ${XDG_CACHE_HOME:-$HOME/.cache}/terraform-provider-hyperpod/controlplane/k8s-<v>_etcd-<v>_kueue-<v>.
// The directory may not exist.
func CachedAssetsDir(kueueVersion string) (string, error) {
	cache := os.Getenv("XDG_CACHE_HOME")
	if cache == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("locating the control plane assets: %w (set %s)", err, EnvAssetsDir)
		}
		cache = filepath.Join(home, ".cache")
	}
	return filepath.Join(cache, "terraform-provider-hyperpod", "controlplane",
		"k8s-"+KubernetesVersion+"_etcd-"+EtcdVersion+"_kueue-"+kueueVersion), nil
}

// AssetsDirFromEnv resolves the assets directory like DefaultAssetsDir and checks it with
// CheckAssets; the error says how to build what is missing.
func AssetsDirFromEnv() (string, error) {
	dir, err := DefaultAssetsDir()
	if err != nil {
		return "", err
	}
	if err := CheckAssets(dir); err != nil {
		return "", err
	}
	return dir, nil
}

// HasBinaries reports whether dir holds executable kube-apiserver and etcd binaries.
func HasBinaries(dir string) bool {
	return len(missingBinaries(dir)) == 0
}

func missingBinaries(dir string) []string {
	var missing []string
	for _, name := range []string{APIServerBinary, EtcdBinary} {
		fi, err := os.Stat(filepath.Join(dir, name))
		if err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm()&0o111 == 0 {
			missing = append(missing, name)
		}
	}
	return missing
}

// CheckAssets returns an error wrapping ErrAssetsMissing unless dir holds executable
// kube-apiserver and etcd binaries, at least one CRD manifest in crds/ and the PyTorchJob CRD
// in crds-jobs/ (which directories made before it was added lack).
func CheckAssets(dir string) error {
	missing := missingBinaries(dir)
	crds, _ := filepath.Glob(filepath.Join(dir, CRDsDir, "*.yaml"))
	if len(crds) == 0 {
		missing = append(missing, CRDsDir+"/*.yaml")
	}
	if _, err := os.Stat(filepath.Join(dir, JobCRDsDir, PyTorchJobCRD)); err != nil {
		missing = append(missing, JobCRDsDir+"/"+PyTorchJobCRD)
	}
	if len(missing) == 0 {
		return nil
	}
	return fmt.Errorf("%w: %s has no %s; run `make controlplane` (scripts/controlplane-assets.sh) "+
		"to build them from the Go module proxy (a cold build takes ~15-20 minutes), or set %s "+
		"to a directory that holds them", ErrAssetsMissing, dir, strings.Join(missing, ", "), EnvAssetsDir)
}
