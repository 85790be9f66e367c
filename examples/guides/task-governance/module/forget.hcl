# Step 1 with the teams in a module (examples/modules/hyperpod-team): a removed block cannot
# take the quota out of a module that still declares it, so forget the whole module, namespaces
# included, in place of the module block. Nothing is destroyed.
removed {
  from = module.team

  lifecycle {
    destroy = false
  }
}

removed {
  from = hyperpod_cluster_scheduler_config.this

  lifecycle {
    destroy = false
  }
}
