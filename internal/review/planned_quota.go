package review

import (
	"encoding/json"
	"fmt"
	"math/big"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/catalog"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/quota"
)

// plannedQuota is a hyperpod_compute_quota's values in `terraform show -json`, the attributes
// that plan it: Terraform's attribute names, null as nil. The provider's tests hold it to the
// resource's schema and to what the provider reads of the same values.
type plannedQuota struct {
	Name            string `json:"name"`
	Description     string `json:"description"`
	Team            string `json:"team"`
	FairShareWeight int64  `json:"fair_share_weight"`
	quota.AttributeConfig[int64, float64]
}

// plannedAmounts is the amounts and the partition of a resources entry or an
// absolute_borrow_limits element.
type plannedAmounts = quota.AttributeLimit[int64, float64]

// PlannedQuota is the configuration a compute quota's planned values in `terraform show -json`
// plan again; nil for null (no quota before a create, or after a delete). The plan holds the
// accelerators that count or accelerator_partition computed, which a configuration may not set
// beside them, so they are left out. Every other computed amount equals what the
// configuration's sizing resolves to, so taking it as set is an override that changes nothing.
func PlannedQuota(raw json.RawMessage) (*quota.Config, error) {
	var q *plannedQuota
	if err := json.Unmarshal(orNull(raw), &q); err != nil {
		return nil, fmt.Errorf("decoding the planned values: %w", err)
	}
	if q == nil {
		return nil, nil
	}
	cfg := &quota.Config{Name: q.Name, Description: q.Description, Team: q.Team, ActivationState: q.ActivationState,
		PreemptTeamTasks: q.PreemptTeamTasks, FairShareWeight: q.FairShareWeight, Cohort: q.Cohort}
	if s := q.Sharing; s != nil {
		cfg.Sharing.Strategy, cfg.Sharing.BorrowLimit = s.Strategy, s.BorrowLimit
		if s.AbsoluteBorrowLimits != nil {
			cfg.Sharing.AbsoluteBorrowLimits = []quota.AbsoluteBorrowLimit{}
		}
		for _, l := range derefSlice(s.AbsoluteBorrowLimits) {
			a := configured(l)
			cfg.Sharing.AbsoluteBorrowLimits = append(cfg.Sharing.AbsoluteBorrowLimits, quota.AbsoluteBorrowLimit{
				InstanceType: a.InstanceType, Count: a.Count, Accelerators: a.Accelerators,
				VCPU: decimal(a.VCPU), MemoryGiB: decimal(a.MemoryInGiB), Partition: partition(a)})
		}
	}
	for _, e := range q.Resources {
		a := configured(plannedAmounts{AttributeAmounts: e.AttributeAmounts, Partition: e.Partition})
		cfg.Resources = append(cfg.Resources, quota.Entry{InstanceType: a.InstanceType, Count: a.Count,
			Accelerators: a.Accelerators, EFA: e.EFA, VCPU: decimal(a.VCPU), MemoryGiB: decimal(a.MemoryInGiB),
			Partition: partition(a)})
	}
	return cfg, nil
}

// configured is a's amounts as a configuration sets them: without the accelerators that count
// or the partition computed.
func configured(a plannedAmounts) plannedAmounts {
	if a.Count != nil || a.Partition != nil {
		a.Accelerators = nil
	}
	return a
}

func partition(a plannedAmounts) *quota.Partition {
	if a.Partition == nil {
		return nil
	}
	return &quota.Partition{Type: a.Partition.Type, Count: a.Partition.Count}
}

func orNull(raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 {
		return json.RawMessage("null")
	}
	return raw
}

func derefSlice[T any](p *[]T) []T {
	if p == nil {
		return nil
	}
	return *p
}

// decimal is a number attribute as the exact decimal the user wrote (quota.DecimalFromFloat, as
// the provider reads it).
func decimal(f *float64) *big.Rat {
	if f == nil {
		return nil
	}
	return quota.DecimalFromFloat(*f)
}

// plannedOverride is an instance_types entry of the provider block in `terraform show -json`.
type plannedOverride struct {
	Accelerators        *int64    `json:"accelerators"`
	AcceleratorResource *string   `json:"accelerator_resource"`
	VCPU                *float64  `json:"vcpu"`
	MemoryInGiB         *float64  `json:"memory_in_gib"`
	EFA                 *int64    `json:"efa"`
	MIGProfiles         *[]string `json:"mig_profiles"` // nil: null
}

// overridesOf reads the provider block's instance_types constant: null entries are left out,
// as the provider leaves them out.
func overridesOf(raw json.RawMessage) (map[string]catalog.Override, error) {
	var entries map[string]*plannedOverride
	if err := json.Unmarshal(raw, &entries); err != nil {
		return nil, err
	}
	out := make(map[string]catalog.Override, len(entries))
	for name, o := range entries {
		if o == nil {
			continue
		}
		out[name] = catalog.Override{Accelerators: o.Accelerators, AcceleratorResource: o.AcceleratorResource,
			VCPU: o.VCPU, MemoryGiB: o.MemoryInGiB, EFA: o.EFA, MIGProfiles: migProfiles(o.MIGProfiles)}
	}
	return out, nil
}

// migProfiles: a null list keeps the built-in profiles, a list (even empty) replaces them.
func migProfiles(p *[]string) []string {
	if p == nil {
		return nil
	}
	return append([]string{}, *p...)
}
