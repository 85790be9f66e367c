package admission

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"sigs.k8s.io/yaml"
)

// ManagerConfig is what the preview needs of the Kueue manager's configuration: the settings
// that change which Workloads it admits or preempts. The zero value is a configuration that was
// not read (Known false): the preview then takes fair sharing from Cluster.FairSharing and
// assumes the rest default, as its package documentation says.
type ManagerConfig struct {
	// Known is true when the configuration was read (ParseManagerConfig).
	Known bool
	// FairSharing is whether fair sharing is on: fairSharing set (v1beta2), or
	// fairSharing.enable (v1beta1).
	FairSharing bool
	// PreemptionStrategies are fairSharing.preemptionStrategies as written; empty means Kueue's
	// default (DefaultPreemptionStrategies).
	PreemptionStrategies []string
	// WaitForPodsReady is whether waitForPodsReady is configured and not turned off by the
	// DisableWaitForPodsReady feature gate; BlockAdmission is its blockAdmission as Kueue
	// defaults it (false in v1beta2, the value of enable in v1beta1). Kueue v0.19 turns
	// waitForPodsReady on when the document does not mention it; without blockAdmission it
	// changes no admission decision.
	WaitForPodsReady bool
	BlockAdmission   bool
	// AdmissionFairSharing is whether admissionFairSharing is set: the Workloads of queues with
	// admissionScope UsageBasedAdmissionFairSharing are then ordered by past usage.
	AdmissionFairSharing bool
	// ExcludeResourcePrefixes and ResourceTransformations (the transformations' inputs) change
	// what Kueue counts of a pod's requests.
	ExcludeResourcePrefixes []string
	ResourceTransformations []string
	// QuotaCheckStrategy is resources.quotaCheckStrategy ("" or BlockUndeclared is the default).
	QuotaCheckStrategy string
	// FeatureGates are the featureGates the document sets.
	FeatureGates map[string]bool
}

// DefaultPreemptionStrategies are the fair-sharing preemption strategies Kueue uses when the
// configuration names none: the ones the preview models.
var DefaultPreemptionStrategies = []string{"LessThanOrEqualToFinalShare", "LessThanInitialShare"}

// Where Kueue's Configuration document lives and what it is.
const (
	configGroup       = "config.kueue.x-k8s.io"
	configKind        = "Configuration"
	configV1beta1     = configGroup + "/v1beta1"
	configV1beta2     = configGroup + "/v1beta2"
	defaultQuotaCheck = "BlockUndeclared"
	// gateDisableWaitForPodsReady turns waitForPodsReady off (Kueue v0.19).
	gateDisableWaitForPodsReady = "DisableWaitForPodsReady"
)

// managerDocument is the part of Kueue's Configuration (config.kueue.x-k8s.io v1beta1 or
// v1beta2) that changes admission decisions.
type managerDocument struct {
	APIVersion           string               `json:"apiVersion"`
	Kind                 string               `json:"kind"`
	FairSharing          *fairSharingDoc      `json:"fairSharing"`
	WaitForPodsReady     *waitForPodsReadyDoc `json:"waitForPodsReady"`
	AdmissionFairSharing *struct{}            `json:"admissionFairSharing"`
	Resources            *struct {
		ExcludeResourcePrefixes []string `json:"excludeResourcePrefixes"`
		Transformations         []struct {
			Input string `json:"input"`
		} `json:"transformations"`
		QuotaCheckStrategy string `json:"quotaCheckStrategy"`
	} `json:"resources"`
	FeatureGates map[string]bool `json:"featureGates"`
}

// fairSharingDoc and waitForPodsReadyDoc: v1beta1 turns each on with enable, v1beta2 by its
// presence.
type (
	fairSharingDoc struct {
		Enable               *bool    `json:"enable"`
		PreemptionStrategies []string `json:"preemptionStrategies"`
	}
	waitForPodsReadyDoc struct {
		Enable         *bool `json:"enable"`
		BlockAdmission *bool `json:"blockAdmission"`
	}
)

// ParseManagerConfig reads Kueue's Configuration document: the manager ConfigMap's
// controller_manager_config.yaml (kueue.ManagerConfigMap, kueue.ManagerConfigKey), in
// config.kueue.x-k8s.io v1beta1 or v1beta2, with Kueue's defaults for what it leaves out.
func ParseManagerConfig(data []byte) (ManagerConfig, error) {
	var doc managerDocument
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return ManagerConfig{}, fmt.Errorf("kueue's manager configuration is not a YAML document: %w", err)
	}
	if doc.Kind != configKind || (doc.APIVersion != configV1beta1 && doc.APIVersion != configV1beta2) {
		return ManagerConfig{}, fmt.Errorf("kueue's manager configuration is apiVersion %q kind %q, want %s or %s kind %s",
			doc.APIVersion, doc.Kind, configV1beta2, configV1beta1, configKind)
	}
	v1beta1 := doc.APIVersion == configV1beta1
	enabled := func(enable *bool) bool { return !v1beta1 || (enable != nil && *enable) }
	m := ManagerConfig{Known: true, FeatureGates: doc.FeatureGates}
	if fs := doc.FairSharing; fs != nil && enabled(fs.Enable) {
		m.FairSharing = true
		m.PreemptionStrategies = fs.PreemptionStrategies
	}
	if w := doc.WaitForPodsReady; w != nil && enabled(w.Enable) && !doc.FeatureGates[gateDisableWaitForPodsReady] {
		m.WaitForPodsReady = true
		// v1beta1 defaults blockAdmission to enable (true), v1beta2 to false.
		m.BlockAdmission = v1beta1
		if w.BlockAdmission != nil {
			m.BlockAdmission = *w.BlockAdmission
		}
	}
	m.AdmissionFairSharing = doc.AdmissionFairSharing != nil
	if r := doc.Resources; r != nil {
		m.ExcludeResourcePrefixes = r.ExcludeResourcePrefixes
		for _, t := range r.Transformations {
			m.ResourceTransformations = append(m.ResourceTransformations, t.Input)
		}
		m.QuotaCheckStrategy = r.QuotaCheckStrategy
	}
	return m, nil
}

// WithManager is c with the manager's configuration m, and fair sharing as m says when m is known.
func (c Cluster) WithManager(m ManagerConfig) Cluster {
	c.Manager = m
	if m.Known {
		c.FairSharing = m.FairSharing
	}
	return c
}

// harmlessGates are feature gates that change nothing the preview models.
var harmlessGates = []string{"VisibilityOnDemand", "LocalQueueMetrics", "MetricsForCohorts", gateDisableWaitForPodsReady}

// unmodelled is a setting of the manager that changes decisions the preview does not follow
// for a ClusterQueue, for a person, with the reason it is reported under ("" when there is
// none); inCohort is whether the queue is in a cohort, usageBased whether it has admissionScope
// UsageBasedAdmissionFairSharing.
func (m ManagerConfig) unmodelled(inCohort, usageBased bool) (UndeterminedReason, string) {
	switch {
	case !m.Known && usageBased:
		return ManagerConfiguration, "the queue has admissionScope UsageBasedAdmissionFairSharing and the manager's configuration was not read"
	case !m.Known:
	case m.BlockAdmission:
		return WaitForPodsReady, "the manager's waitForPodsReady.blockAdmission holds admissions until the admitted Workloads' pods are ready"
	case m.FairSharing && inCohort && len(m.PreemptionStrategies) > 0 && !slices.Equal(m.PreemptionStrategies, DefaultPreemptionStrategies):
		return PreemptionStrategies, "the manager's fair-sharing preemptionStrategies are " + strings.Join(m.PreemptionStrategies, ", ") +
			"; the preview models " + strings.Join(DefaultPreemptionStrategies, ", ")
	case m.AdmissionFairSharing && usageBased:
		return ManagerConfiguration, "the manager's admissionFairSharing orders the queue's Workloads by past usage"
	case len(m.ExcludeResourcePrefixes) > 0:
		return ManagerConfiguration, "the manager's resources.excludeResourcePrefixes change what Kueue counts of the requests"
	case len(m.ResourceTransformations) > 0:
		return ManagerConfiguration, "the manager's resources.transformations change what Kueue counts of the requests"
	case m.QuotaCheckStrategy != "" && m.QuotaCheckStrategy != defaultQuotaCheck:
		return ManagerConfiguration, "the manager's resources.quotaCheckStrategy is " + m.QuotaCheckStrategy
	}
	for _, gate := range slices.Sorted(maps.Keys(m.FeatureGates)) {
		if !slices.Contains(harmlessGates, gate) {
			return ManagerConfiguration, fmt.Sprintf("the manager sets the feature gate %s=%t", gate, m.FeatureGates[gate])
		}
	}
	return "", ""
}

// ParseFeatureGates reads the value of the manager's --feature-gates flag ("A=true,B=false").
func ParseFeatureGates(flag string) (map[string]bool, error) {
	gates := map[string]bool{}
	for _, item := range strings.Split(flag, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		name, value, ok := strings.Cut(item, "=")
		on, err := strconv.ParseBool(strings.TrimSpace(value))
		if !ok || err != nil || strings.TrimSpace(name) == "" {
			return nil, fmt.Errorf("feature gate %q is not NAME=true or NAME=false", item)
		}
		gates[strings.TrimSpace(name)] = on
	}
	return gates, nil
}

// WithFeatureGates is m with the feature gates given on the manager's command line, which
// override the configuration's as in Kueue. It leaves Known as it is.
func (m ManagerConfig) WithFeatureGates(gates map[string]bool) ManagerConfig {
	if len(gates) == 0 {
		return m
	}
	merged := maps.Clone(m.FeatureGates)
	if merged == nil {
		merged = map[string]bool{}
	}
	maps.Copy(merged, gates)
	m.FeatureGates = merged
	if merged[gateDisableWaitForPodsReady] {
		m.WaitForPodsReady, m.BlockAdmission = false, false
	}
	return m
}
