package localcluster

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// StartKueue starts Kueue's manager, as Start does with Options.Kueue, on a control plane this
// process started without it. The bench measures most of its commands without the manager and
// its admission preview section, which needs Kueue's decisions, with it on the same control
// plane. timeout bounds the manager's start (0 means 120 s).
func (c *Cluster) StartKueue(ctx context.Context, assets string, timeout time.Duration) error {
	if c.attached {
		return errors.New("localcluster: cannot start Kueue on a control plane this process did not start")
	}
	if c.kueue != nil {
		return errors.New("localcluster: Kueue's manager already runs")
	}
	assets, err := filepath.Abs(assets)
	if err != nil {
		return err
	}
	if missing := missingKueueAssets(assets); len(missing) > 0 {
		return fmt.Errorf("%w: %s has no %s; run `make controlplane` (scripts/controlplane-assets.sh) to build Kueue's manager",
			ErrAssetsMissing, assets, strings.Join(missing, ", "))
	}
	kubeconfig, err := os.ReadFile(c.KubeconfigPath)
	if err != nil {
		return fmt.Errorf("kueue: the admin kubeconfig: %w", err)
	}
	if timeout == 0 {
		timeout = 120 * time.Second
	}
	return c.startKueue(ctx, assets, string(kubeconfig), timeout)
}
