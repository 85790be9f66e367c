package admission

func simulate(c Cluster) Outcome {
	return Outcome{Version: c.Version.orLatest()}
}
