package admission

// Amounts are the ClusterQueue's usage, nominal quota and excess of the flavor-resource, as a
// person reads them (cores, binary bytes, counts).
func (n OverNominal) Amounts() (used, nominal, over string) {
	return formatAmount(n.Resource, n.Used), formatAmount(n.Resource, n.Nominal), formatAmount(n.Resource, n.Over())
}
