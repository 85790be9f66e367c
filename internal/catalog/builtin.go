package catalog

// Built-in figures: per-instance public figures from the HyperPod instance reference table.
// Each helper call is one instance type; sizes of a family are listed separately on purpose,
// so a reviewer can compare each line with the reference table.

// MIG profile lists, in NVIDIA's order, one per GPU model that supports MIG here.
var (
	migA100x40GB = []string{"mig-1g.5gb", "mig-1g.10gb", "mig-2g.10gb", "mig-3g.20gb", "mig-4g.20gb", "mig-7g.40gb"}
	migA100x80GB = []string{"mig-1g.10gb", "mig-1g.20gb", "mig-2g.20gb", "mig-3g.40gb", "mig-4g.40gb", "mig-7g.80gb"}
	migH100      = []string{"mig-1g.10gb", "mig-1g.20gb", "mig-2g.20gb", "mig-3g.40gb", "mig-4g.40gb", "mig-7g.80gb"}
	migH200      = []string{"mig-1g.18gb", "mig-1g.35gb", "mig-2g.35gb", "mig-3g.71gb", "mig-4g.71gb", "mig-7g.141gb"}
	migB200      = []string{"mig-1g.23gb", "mig-1g.45gb", "mig-2g.45gb", "mig-3g.90gb", "mig-4g.90gb", "mig-7g.180gb"}
	migGB200     = []string{"mig-1g.23gb", "mig-1g.47gb", "mig-2g.47gb", "mig-3g.93gb", "mig-4g.93gb", "mig-7g.186gb"}
)

// gpu is an instance type with NVIDIA GPUs.
func gpu(name string, n int64, model string, vcpu, mem float64, efa int64, mig []string) InstanceType {
	return InstanceType{Name: name, Accelerators: n, AcceleratorType: model, AcceleratorResource: ResourceNvidiaGPU,
		VCPU: vcpu, MemoryGiB: mem, EFA: efa, MIGProfiles: mig}
}

// neuron is an instance type with AWS Trainium devices.
func neuron(name string, n int64, model string, vcpu, mem float64, efa int64) InstanceType {
	return InstanceType{Name: name, Accelerators: n, AcceleratorType: model, AcceleratorResource: ResourceNeuronDevice,
		VCPU: vcpu, MemoryGiB: mem, EFA: efa}
}

// cpu is an instance type without accelerators.
func cpu(name string, vcpu, mem float64, efa int64) InstanceType {
	return InstanceType{Name: name, VCPU: vcpu, MemoryGiB: mem, EFA: efa}
}

// builtinTypes returns a fresh map each call, so no caller can reach the shared MIG lists above.
func builtinTypes() map[string]InstanceType {
	list := builtinList()
	types := make(map[string]InstanceType, len(list))
	for _, t := range list {
		if _, dup := types[t.Name]; dup {
			panic("catalog: built-in instance type listed twice: " + t.Name)
		}
		t.Source = SourceCatalog
		types[t.Name] = t.clone() // own copy of the shared MIG list
	}
	return types
}

// builtinList is the reference table, one line an instance type.
func builtinList() []InstanceType {
	return []InstanceType{
		gpu("ml.g5.xlarge", 1, "A10G", 4, 16, 0, nil),
		gpu("ml.g5.2xlarge", 1, "A10G", 8, 32, 0, nil),
		gpu("ml.g5.4xlarge", 1, "A10G", 16, 64, 0, nil),
		gpu("ml.g5.8xlarge", 1, "A10G", 32, 128, 1, nil),
		gpu("ml.g5.16xlarge", 1, "A10G", 64, 256, 1, nil),
		gpu("ml.g5.12xlarge", 4, "A10G", 48, 192, 1, nil),
		gpu("ml.g5.24xlarge", 4, "A10G", 96, 384, 1, nil),
		gpu("ml.g5.48xlarge", 8, "A10G", 192, 768, 1, nil),

		gpu("ml.g6.xlarge", 1, "L4", 4, 16, 0, nil),
		gpu("ml.g6.2xlarge", 1, "L4", 8, 32, 0, nil),
		gpu("ml.g6.4xlarge", 1, "L4", 16, 64, 0, nil),
		gpu("ml.g6.8xlarge", 1, "L4", 32, 128, 1, nil),
		gpu("ml.g6.16xlarge", 1, "L4", 64, 256, 1, nil),
		gpu("ml.g6.12xlarge", 4, "L4", 48, 192, 1, nil),
		gpu("ml.g6.24xlarge", 4, "L4", 96, 384, 1, nil),
		gpu("ml.g6.48xlarge", 8, "L4", 192, 768, 1, nil),

		gpu("ml.gr6.4xlarge", 1, "L4", 16, 128, 0, nil),
		gpu("ml.gr6.8xlarge", 1, "L4", 32, 256, 1, nil),

		gpu("ml.g6e.xlarge", 1, "L40S", 4, 32, 0, nil),
		gpu("ml.g6e.2xlarge", 1, "L40S", 8, 64, 0, nil),
		gpu("ml.g6e.4xlarge", 1, "L40S", 16, 128, 0, nil),
		gpu("ml.g6e.8xlarge", 1, "L40S", 32, 256, 1, nil),
		gpu("ml.g6e.16xlarge", 1, "L40S", 64, 512, 1, nil),
		gpu("ml.g6e.12xlarge", 4, "L40S", 48, 384, 1, nil),
		gpu("ml.g6e.24xlarge", 4, "L40S", 96, 768, 2, nil),
		gpu("ml.g6e.48xlarge", 8, "L40S", 192, 1536, 4, nil),

		gpu("ml.p4d.24xlarge", 8, "A100 40GB", 96, 1152, 4, migA100x40GB),
		gpu("ml.p4de.24xlarge", 8, "A100 80GB", 96, 1152, 4, migA100x80GB),
		gpu("ml.p5.4xlarge", 1, "H100", 16, 256, 1, nil),
		gpu("ml.p5.48xlarge", 8, "H100", 192, 2048, 32, migH100),
		gpu("ml.p5e.48xlarge", 8, "H200", 192, 2048, 32, migH200),
		gpu("ml.p5en.48xlarge", 8, "H200", 192, 2048, 16, migH200),
		gpu("ml.p6-b200.48xlarge", 8, "B200", 192, 2048, 8, migB200),
		gpu("ml.p6e-gb200.36xlarge", 4, "GB200", 144, 960, 0, migGB200),

		neuron("ml.trn1.32xlarge", 16, "Trainium", 128, 512, 8),
		neuron("ml.trn1n.32xlarge", 16, "Trainium", 128, 512, 16),
		neuron("ml.trn2.3xlarge", 1, "Trainium2", 12, 128, 1),
		neuron("ml.trn2.48xlarge", 16, "Trainium2", 192, 2048, 16),

		cpu("ml.c5.large", 2, 4, 0),
		cpu("ml.c5.xlarge", 4, 8, 0),
		cpu("ml.c5.2xlarge", 8, 16, 0),
		cpu("ml.c5.4xlarge", 16, 32, 0),
		cpu("ml.c5.9xlarge", 36, 72, 0),
		cpu("ml.c5.12xlarge", 48, 96, 0),
		cpu("ml.c5.18xlarge", 72, 144, 0),
		cpu("ml.c5.24xlarge", 96, 192, 0),

		cpu("ml.c5n.large", 2, 5.25, 0),
		cpu("ml.c5n.2xlarge", 8, 21, 0),
		cpu("ml.c5n.4xlarge", 16, 42, 0),
		cpu("ml.c5n.9xlarge", 36, 96, 1),
		cpu("ml.c5n.18xlarge", 72, 192, 1),

		cpu("ml.m5.large", 2, 8, 0),
		cpu("ml.m5.xlarge", 4, 16, 0),
		cpu("ml.m5.2xlarge", 8, 32, 0),
		cpu("ml.m5.4xlarge", 16, 64, 0),
		cpu("ml.m5.8xlarge", 32, 128, 0),
		cpu("ml.m5.12xlarge", 48, 192, 0),
		cpu("ml.m5.16xlarge", 64, 256, 0),
		cpu("ml.m5.24xlarge", 96, 384, 0),

		cpu("ml.t3.medium", 2, 4, 0),
		cpu("ml.t3.large", 2, 8, 0),
		cpu("ml.t3.xlarge", 4, 16, 0),
		cpu("ml.t3.2xlarge", 8, 32, 0),
	}
}
