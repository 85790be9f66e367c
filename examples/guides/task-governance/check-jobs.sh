# Step 4, after the apply on the new path, before jobs are submitted again.

# One ClusterQueue per team (hyperpod-ns-<team>-clusterqueue) and one LocalQueue in each team's
# namespace; data "hyperpod_team_usage" shows a team's nominal quota and whether it is Active.
kubectl get clusterqueues -o wide
kubectl get localqueues --all-namespaces

# Every job that waited before has a Workload again, in its team's LocalQueue: admitted, or
# pending for a reason you expect (not "LocalQueue ... doesn't exist" once the team's quota is
# applied). Compare with workloads-before.txt.
kubectl get workloads --all-namespaces -o wide

# Jobs that are suspended, and those Kueue stopped (event reason Stopped). A job that is not
# suspended and has no admitted Workload above started before the switch, or while no Kueue
# webhook suspended new jobs: Kueue v0.17 leaves such a job running and counts it against no
# quota until it ends.
kubectl get jobs --all-namespaces -o custom-columns=NAMESPACE:.metadata.namespace,NAME:.metadata.name,SUSPENDED:.spec.suspend
kubectl get events --all-namespaces --field-selector reason=Stopped

