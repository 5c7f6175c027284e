"""Video moment retrieval: moment runs and ground truth, temporal IoU, AxIoU, R@K,theta, AP@K,theta, DCG@K, mAP."""

from app.evaluation.moments.evaluate import DEFAULT_MOMENT_MEASURES, evaluate_moment_files, evaluate_moments
from app.evaluation.moments.measures import (
    MAP_DEPTH,
    MomentMeasure,
    ap_at,
    axiou,
    dcg_at,
    detection_map,
    moment_scores,
    parse_moment_measure,
    recall_at,
)
from app.evaluation.moments.parse import (
    MomentGroundTruth,
    MomentRunTable,
    parse_moment_ground_truth,
    parse_moment_run,
)
from app.evaluation.moments.relevance import (
    GroundTruthSegments,
    MomentRelevance,
    RankedMoments,
    ground_truth_segments,
    moment_relevance,
    rank_moments,
    temporal_iou,
)

__all__ = [
    "DEFAULT_MOMENT_MEASURES",
    "MAP_DEPTH",
    "GroundTruthSegments",
    "MomentGroundTruth",
    "MomentMeasure",
    "MomentRelevance",
    "MomentRunTable",
    "RankedMoments",
    "ap_at",
    "axiou",
    "dcg_at",
    "detection_map",
    "evaluate_moment_files",
    "evaluate_moments",
    "ground_truth_segments",
    "moment_relevance",
    "moment_scores",
    "parse_moment_ground_truth",
    "parse_moment_measure",
    "parse_moment_run",
    "rank_moments",
    "recall_at",
    "temporal_iou",
]
