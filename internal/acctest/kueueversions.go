package acctest

import (
	"os"
	"testing"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/localcluster"
)

// KueueAssets is the assets directory of a Kueue release for a test that starts a control plane
// of its own on that release: $HYPERPOD_CONTROLPLANE_DIR when it holds the release, else the
// cache directory scripts/controlplane-assets.sh fills. It fails the test, saying how to build
// them, when the assets are missing.
func KueueAssets(t testing.TB, version string) string {
	t.Helper()
	if dir := os.Getenv(localcluster.EnvAssetsDir); dir != "" && localcluster.KueueVersionOf(dir) == version {
		if err := localcluster.CheckAssets(dir); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	dir, err := localcluster.CachedAssetsDir(version)
	if err != nil {
		t.Fatal(err)
	}
	if err := localcluster.CheckAssets(dir); err != nil {
		t.Fatalf("Kueue %s: %v\n(prepare it with %s=%s scripts/controlplane-assets.sh; make test does)",
			version, err, localcluster.EnvKueueVersion, version)
	}
	return dir
}
