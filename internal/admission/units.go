package admission

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// formatAmount prints an amount in the units a person reads: cores, binary bytes, counts.
func formatAmount(name string, v int64) string {
	switch corev1.ResourceName(name) {
	case corev1.ResourceCPU:
		return resource.NewMilliQuantity(v, resource.DecimalSI).String()
	case corev1.ResourceMemory:
		return resource.NewQuantity(v, resource.BinarySI).String()
	}
	return resource.NewQuantity(v, resource.DecimalSI).String()
}
