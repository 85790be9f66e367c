# The import ID is the class names without the -priority suffix, joined by commas.
import {
  to = hyperpod_cluster_scheduler_config.policy
  id = "inference,training,experimentation"
}
