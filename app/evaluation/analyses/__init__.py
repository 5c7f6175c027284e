"""Reusability and meta-evaluation analyses (SPEC section 6): pool depth, leave-out, measure agreement,
stability, label noise, all-tied topics, discriminative power. Pure numpy/scipy over app.evaluation."""

from app.evaluation.analyses.depth_inference import (
    DepthEstimate,
    PoolDepths,
    infer_pool_depth,
    judged_share,
    pool_depths,
)
from app.evaluation.analyses.groups import RunGroups, parse_run_groups, read_run_groups
from app.evaluation.analyses.kendall import tau_ap, tau_ap_symmetric, tau_b, tau_b_batch
from app.evaluation.analyses.label_noise import LabelNoiseResult, label_noise, perturb
from app.evaluation.analyses.leave_out import LeaveOutResult, leave_out
from app.evaluation.analyses.lines import APKernel, LineIndex, SubsetScorer, index_lines, line_min_rank
from app.evaluation.analyses.measure_agreement import agreement_matrix, agreement_result, measure_agreement
from app.evaluation.analyses.moment_results import moment_results
from app.evaluation.analyses.pool_depth import PoolDepthResult, line_depths, pool_depth
from app.evaluation.analyses.power import discriminative_power, power_result
from app.evaluation.analyses.stability import StabilityResult, default_sizes, results_stability, stability
from app.evaluation.analyses.ties import all_tied_ratio, all_tied_ratios, ties_result

__all__ = [
    "APKernel",
    "DepthEstimate",
    "LabelNoiseResult",
    "LeaveOutResult",
    "LineIndex",
    "PoolDepthResult",
    "PoolDepths",
    "RunGroups",
    "StabilityResult",
    "SubsetScorer",
    "agreement_matrix",
    "agreement_result",
    "all_tied_ratio",
    "all_tied_ratios",
    "default_sizes",
    "discriminative_power",
    "index_lines",
    "infer_pool_depth",
    "judged_share",
    "label_noise",
    "leave_out",
    "line_depths",
    "line_min_rank",
    "measure_agreement",
    "moment_results",
    "parse_run_groups",
    "perturb",
    "pool_depth",
    "pool_depths",
    "power_result",
    "read_run_groups",
    "results_stability",
    "stability",
    "tau_ap",
    "tau_ap_symmetric",
    "tau_b",
    "tau_b_batch",
    "ties_result",
]
