# A fourth team joins the cohort, with a quota it does not use yet and lends meanwhile.
resource "hyperpod_compute_quota" "inference" {
  name              = "inference"
  team              = "inference"
  cohort            = "h100"
  fair_share_weight = 10
  resource_sharing  = { strategy = "Lend" }
  resources         = [{ instance_type = "ml.p5.48xlarge", accelerators = 4 }]
}

resource "hyperpod_team_namespace" "inference" {
  team = "inference"
}
