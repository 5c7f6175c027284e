"""initial schema: the whole campaign domain

Revision ID: 0001
Revises: 
Create Date: 2026-11-22 01:11:29.858355
"""

from alembic import op
import sqlalchemy as sa
from sqlalchemy.dialects import postgresql

revision = '0001'
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('campaigns',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('name', sa.String(length=200), nullable=False),
    sa.Column('description', sa.Text(), nullable=False),
    sa.Column('task_kind', sa.Enum('shots', 'moments', name='task_kind'), nullable=False),
    sa.Column('status', sa.Enum('draft', 'open', 'closed', 'pooled', 'judging', 'evaluated', 'published', name='campaign_status'), nullable=False),
    sa.Column('max_results', sa.Integer(), nullable=False),
    sa.Column('max_runs_per_team', sa.Integer(), nullable=False),
    sa.Column('submission_opens_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('submission_closes_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('media_url_template', sa.Text(), nullable=True),
    sa.Column('created_at', sa.DateTime(timezone=True), server_default=sa.text('now()'), nullable=False),
    sa.CheckConstraint('max_results > 0', name=op.f('ck_campaigns_max_results_positive')),
    sa.CheckConstraint('max_runs_per_team > 0', name=op.f('ck_campaigns_max_runs_positive')),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_campaigns')),
    sa.UniqueConstraint('name', name=op.f('uq_campaigns_name'))
    )
    op.create_table('moment_entries',
    sa.Column('run_id', sa.Integer(), nullable=False),
    sa.Column('seq', sa.Integer(), nullable=False),
    sa.Column('topic_id', sa.Integer(), nullable=False),
    sa.Column('video_id', sa.Text(), nullable=False),
    sa.Column('start', sa.Double(), nullable=False),
    sa.Column('end', sa.Double(), nullable=False),
    sa.Column('score', sa.Double(), nullable=False),
    sa.PrimaryKeyConstraint('run_id', 'seq', name=op.f('pk_moment_entries'))
    )
    op.create_table('run_entries',
    sa.Column('run_id', sa.Integer(), nullable=False),
    sa.Column('seq', sa.Integer(), nullable=False),
    sa.Column('topic_id', sa.Integer(), nullable=False),
    sa.Column('docno', sa.Text(), nullable=False),
    sa.Column('rank', sa.Integer(), nullable=False),
    sa.Column('score', sa.Double(), nullable=False),
    sa.PrimaryKeyConstraint('run_id', 'seq', name=op.f('pk_run_entries'))
    )
    op.create_table('analysis_jobs',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('campaign_id', sa.Integer(), nullable=False),
    sa.Column('kind', sa.String(length=40), nullable=False),
    sa.Column('params', postgresql.JSONB(astext_type=sa.Text()), nullable=False),
    sa.Column('status', sa.String(length=16), nullable=False),
    sa.Column('progress', sa.Double(), nullable=False),
    sa.Column('result', postgresql.JSONB(astext_type=sa.Text()), nullable=True),
    sa.Column('error', sa.Text(), nullable=True),
    sa.Column('created_at', sa.DateTime(timezone=True), server_default=sa.text('now()'), nullable=False),
    sa.Column('finished_at', sa.DateTime(timezone=True), nullable=True),
    sa.ForeignKeyConstraint(['campaign_id'], ['campaigns.id'], name=op.f('fk_analysis_jobs_campaign_id_campaigns'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_analysis_jobs'))
    )
    op.create_index(op.f('ix_analysis_jobs_campaign_id'), 'analysis_jobs', ['campaign_id'], unique=False)
    op.create_table('assessors',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('campaign_id', sa.Integer(), nullable=False),
    sa.Column('name', sa.String(length=200), nullable=False),
    sa.ForeignKeyConstraint(['campaign_id'], ['campaigns.id'], name=op.f('fk_assessors_campaign_id_campaigns'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_assessors')),
    sa.UniqueConstraint('campaign_id', 'name', name=op.f('uq_assessors_campaign_id_name'))
    )
    op.create_index(op.f('ix_assessors_campaign_id'), 'assessors', ['campaign_id'], unique=False)
    op.create_table('blobs',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('campaign_id', sa.Integer(), nullable=False),
    sa.Column('name', sa.String(length=200), nullable=False),
    sa.Column('media_type', sa.String(length=100), nullable=False),
    sa.Column('content', sa.LargeBinary(), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), server_default=sa.text('now()'), nullable=False),
    sa.ForeignKeyConstraint(['campaign_id'], ['campaigns.id'], name=op.f('fk_blobs_campaign_id_campaigns'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_blobs')),
    sa.UniqueConstraint('campaign_id', 'name', name=op.f('uq_blobs_campaign_id_name'))
    )
    op.create_index(op.f('ix_blobs_campaign_id'), 'blobs', ['campaign_id'], unique=False)
    op.create_table('collection_items',
    sa.Column('campaign_id', sa.Integer(), nullable=False),
    sa.Column('shot_id', sa.Text(), nullable=False),
    sa.Column('video_id', sa.Text(), nullable=False),
    sa.Column('start', sa.Double(), nullable=False),
    sa.Column('end', sa.Double(), nullable=False),
    sa.CheckConstraint('start >= 0 AND "end" >= start', name=op.f('ck_collection_items_valid_interval')),
    sa.ForeignKeyConstraint(['campaign_id'], ['campaigns.id'], name=op.f('fk_collection_items_campaign_id_campaigns'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('campaign_id', 'shot_id', name=op.f('pk_collection_items'))
    )
    op.create_index('ix_collection_items_video', 'collection_items', ['campaign_id', 'video_id', 'start'], unique=False)
    op.create_table('pools',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('campaign_id', sa.Integer(), nullable=False),
    sa.Column('kind', sa.String(length=16), nullable=False),
    sa.Column('params', postgresql.JSONB(astext_type=sa.Text()), nullable=False),
    sa.Column('seed', sa.BigInteger(), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), server_default=sa.text('now()'), nullable=False),
    sa.ForeignKeyConstraint(['campaign_id'], ['campaigns.id'], name=op.f('fk_pools_campaign_id_campaigns'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_pools'))
    )
    op.create_index(op.f('ix_pools_campaign_id'), 'pools', ['campaign_id'], unique=False)
    op.create_table('teams',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('campaign_id', sa.Integer(), nullable=False),
    sa.Column('name', sa.String(length=200), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), server_default=sa.text('now()'), nullable=False),
    sa.ForeignKeyConstraint(['campaign_id'], ['campaigns.id'], name=op.f('fk_teams_campaign_id_campaigns'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_teams')),
    sa.UniqueConstraint('campaign_id', 'name', name=op.f('uq_teams_campaign_id_name'))
    )
    op.create_index(op.f('ix_teams_campaign_id'), 'teams', ['campaign_id'], unique=False)
    op.create_table('topics',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('campaign_id', sa.Integer(), nullable=False),
    sa.Column('number', sa.String(length=64), nullable=False),
    sa.Column('title', sa.Text(), nullable=False),
    sa.Column('description', sa.Text(), nullable=False),
    sa.ForeignKeyConstraint(['campaign_id'], ['campaigns.id'], name=op.f('fk_topics_campaign_id_campaigns'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_topics')),
    sa.UniqueConstraint('campaign_id', 'number', name=op.f('uq_topics_campaign_id_number'))
    )
    op.create_index(op.f('ix_topics_campaign_id'), 'topics', ['campaign_id'], unique=False)
    op.create_table('api_tokens',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('token_hash', sa.String(length=64), nullable=False),
    sa.Column('role', sa.Enum('organiser', 'team', 'assessor', name='role'), nullable=False),
    sa.Column('label', sa.String(length=200), nullable=False),
    sa.Column('campaign_id', sa.Integer(), nullable=True),
    sa.Column('team_id', sa.Integer(), nullable=True),
    sa.Column('assessor_id', sa.Integer(), nullable=True),
    sa.Column('created_at', sa.DateTime(timezone=True), server_default=sa.text('now()'), nullable=False),
    sa.Column('revoked_at', sa.DateTime(timezone=True), nullable=True),
    sa.CheckConstraint("(role <> 'team' OR team_id IS NOT NULL) AND (role <> 'assessor' OR assessor_id IS NOT NULL)", name=op.f('ck_api_tokens_principal_present')),
    sa.ForeignKeyConstraint(['assessor_id'], ['assessors.id'], name=op.f('fk_api_tokens_assessor_id_assessors'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['campaign_id'], ['campaigns.id'], name=op.f('fk_api_tokens_campaign_id_campaigns'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['team_id'], ['teams.id'], name=op.f('fk_api_tokens_team_id_teams'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_api_tokens')),
    sa.UniqueConstraint('token_hash', name=op.f('uq_api_tokens_token_hash'))
    )
    op.create_table('assignments',
    sa.Column('pool_id', sa.Integer(), nullable=False),
    sa.Column('topic_id', sa.Integer(), nullable=False),
    sa.Column('assessor_id', sa.Integer(), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), server_default=sa.text('now()'), nullable=False),
    sa.ForeignKeyConstraint(['assessor_id'], ['assessors.id'], name=op.f('fk_assignments_assessor_id_assessors'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['pool_id'], ['pools.id'], name=op.f('fk_assignments_pool_id_pools'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['topic_id'], ['topics.id'], name=op.f('fk_assignments_topic_id_topics'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('pool_id', 'topic_id', 'assessor_id', name=op.f('pk_assignments'))
    )
    op.create_table('ground_truth_segments',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('topic_id', sa.Integer(), nullable=False),
    sa.Column('video_id', sa.Text(), nullable=False),
    sa.Column('start', sa.Double(), nullable=False),
    sa.Column('end', sa.Double(), nullable=False),
    sa.Column('assessor_id', sa.Integer(), nullable=True),
    sa.Column('created_at', sa.DateTime(timezone=True), server_default=sa.text('now()'), nullable=False),
    sa.CheckConstraint('start >= 0 AND "end" > start', name=op.f('ck_ground_truth_segments_valid_interval')),
    sa.ForeignKeyConstraint(['assessor_id'], ['assessors.id'], name=op.f('fk_ground_truth_segments_assessor_id_assessors'), ondelete='SET NULL'),
    sa.ForeignKeyConstraint(['topic_id'], ['topics.id'], name=op.f('fk_ground_truth_segments_topic_id_topics'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_ground_truth_segments'))
    )
    op.create_index(op.f('ix_ground_truth_segments_topic_id'), 'ground_truth_segments', ['topic_id'], unique=False)
    op.create_table('pool_items',
    sa.Column('id', sa.BigInteger(), nullable=False),
    sa.Column('pool_id', sa.Integer(), nullable=False),
    sa.Column('topic_id', sa.Integer(), nullable=False),
    sa.Column('docno', sa.Text(), nullable=False),
    sa.Column('stratum', sa.Integer(), nullable=False),
    sa.Column('sampled', sa.Boolean(), nullable=False),
    sa.Column('best_rank', sa.Integer(), nullable=False),
    sa.Column('n_runs', sa.Integer(), nullable=False),
    sa.Column('judging_order', sa.Integer(), nullable=False),
    sa.ForeignKeyConstraint(['pool_id'], ['pools.id'], name=op.f('fk_pool_items_pool_id_pools'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['topic_id'], ['topics.id'], name=op.f('fk_pool_items_topic_id_topics'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_pool_items')),
    sa.UniqueConstraint('pool_id', 'topic_id', 'docno', name=op.f('uq_pool_items_pool_id_topic_id_docno'))
    )
    op.create_index('ix_pool_items_queue', 'pool_items', ['pool_id', 'topic_id', 'judging_order'], unique=False)
    op.create_table('qrels_versions',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('campaign_id', sa.Integer(), nullable=False),
    sa.Column('label', sa.String(length=200), nullable=False),
    sa.Column('kind', sa.String(length=16), nullable=False),
    sa.Column('source', sa.String(length=16), nullable=False),
    sa.Column('pool_id', sa.Integer(), nullable=True),
    sa.Column('n_entries', sa.Integer(), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), server_default=sa.text('now()'), nullable=False),
    sa.ForeignKeyConstraint(['campaign_id'], ['campaigns.id'], name=op.f('fk_qrels_versions_campaign_id_campaigns'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['pool_id'], ['pools.id'], name=op.f('fk_qrels_versions_pool_id_pools'), ondelete='SET NULL'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_qrels_versions')),
    sa.UniqueConstraint('campaign_id', 'label', name=op.f('uq_qrels_versions_campaign_id_label'))
    )
    op.create_index(op.f('ix_qrels_versions_campaign_id'), 'qrels_versions', ['campaign_id'], unique=False)
    op.create_table('runs',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('campaign_id', sa.Integer(), nullable=False),
    sa.Column('team_id', sa.Integer(), nullable=False),
    sa.Column('name', sa.String(length=200), nullable=False),
    sa.Column('tag', sa.String(length=200), nullable=True),
    sa.Column('format', sa.String(length=16), nullable=False),
    sa.Column('system_type', sa.String(length=1), nullable=False),
    sa.Column('novelty', sa.Boolean(), nullable=False),
    sa.Column('training_type', sa.String(length=1), nullable=False),
    sa.Column('priority', sa.Integer(), nullable=False),
    sa.Column('description', sa.Text(), nullable=False),
    sa.Column('n_entries', sa.Integer(), nullable=False),
    sa.Column('n_topics', sa.Integer(), nullable=False),
    sa.Column('sha256', sa.String(length=64), nullable=False),
    sa.Column('content', sa.LargeBinary(), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), server_default=sa.text('now()'), nullable=False),
    sa.CheckConstraint("system_type IN ('F', 'M', 'R')", name=op.f('ck_runs_system_type')),
    sa.CheckConstraint("training_type IN ('A', 'D', 'E', 'F')", name=op.f('ck_runs_training_type')),
    sa.CheckConstraint('priority >= 1', name=op.f('ck_runs_priority_positive')),
    sa.ForeignKeyConstraint(['campaign_id'], ['campaigns.id'], name=op.f('fk_runs_campaign_id_campaigns'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['team_id'], ['teams.id'], name=op.f('fk_runs_team_id_teams'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_runs')),
    sa.UniqueConstraint('team_id', 'name', name=op.f('uq_runs_team_id_name'))
    )
    op.create_index(op.f('ix_runs_campaign_id'), 'runs', ['campaign_id'], unique=False)
    op.create_index(op.f('ix_runs_team_id'), 'runs', ['team_id'], unique=False)
    op.create_table('evaluations',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('campaign_id', sa.Integer(), nullable=False),
    sa.Column('qrels_version_id', sa.Integer(), nullable=True),
    sa.Column('status', sa.String(length=16), nullable=False),
    sa.Column('progress', sa.Double(), nullable=False),
    sa.Column('measures', postgresql.JSONB(astext_type=sa.Text()), nullable=False),
    sa.Column('error', sa.Text(), nullable=True),
    sa.Column('created_at', sa.DateTime(timezone=True), server_default=sa.text('now()'), nullable=False),
    sa.Column('finished_at', sa.DateTime(timezone=True), nullable=True),
    sa.ForeignKeyConstraint(['campaign_id'], ['campaigns.id'], name=op.f('fk_evaluations_campaign_id_campaigns'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['qrels_version_id'], ['qrels_versions.id'], name=op.f('fk_evaluations_qrels_version_id_qrels_versions'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_evaluations'))
    )
    op.create_index(op.f('ix_evaluations_campaign_id'), 'evaluations', ['campaign_id'], unique=False)
    op.create_table('judgements',
    sa.Column('id', sa.BigInteger(), nullable=False),
    sa.Column('pool_item_id', sa.BigInteger(), nullable=False),
    sa.Column('assessor_id', sa.Integer(), nullable=True),
    sa.Column('round', sa.Integer(), nullable=False),
    sa.Column('verdict', sa.Enum('relevant', 'not_relevant', 'unsure', name='verdict'), nullable=False),
    sa.Column('grade', sa.Integer(), nullable=True),
    sa.Column('seconds_spent', sa.Double(), nullable=True),
    sa.Column('created_at', sa.DateTime(timezone=True), server_default=sa.text('now()'), nullable=False),
    sa.Column('updated_at', sa.DateTime(timezone=True), server_default=sa.text('now()'), nullable=False),
    sa.ForeignKeyConstraint(['assessor_id'], ['assessors.id'], name=op.f('fk_judgements_assessor_id_assessors'), ondelete='SET NULL'),
    sa.ForeignKeyConstraint(['pool_item_id'], ['pool_items.id'], name=op.f('fk_judgements_pool_item_id_pool_items'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_judgements')),
    sa.UniqueConstraint('pool_item_id', 'round', name=op.f('uq_judgements_pool_item_id_round'))
    )
    op.create_table('judging_tasks',
    sa.Column('id', sa.BigInteger(), nullable=False),
    sa.Column('pool_item_id', sa.BigInteger(), nullable=False),
    sa.Column('round', sa.Integer(), nullable=False),
    sa.Column('reason', sa.String(length=200), nullable=False),
    sa.Column('excluded_assessor_id', sa.Integer(), nullable=True),
    sa.Column('leased_to', sa.Integer(), nullable=True),
    sa.Column('leased_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('lease_expires_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('done_at', sa.DateTime(timezone=True), nullable=True),
    sa.ForeignKeyConstraint(['excluded_assessor_id'], ['assessors.id'], name=op.f('fk_judging_tasks_excluded_assessor_id_assessors'), ondelete='SET NULL'),
    sa.ForeignKeyConstraint(['leased_to'], ['assessors.id'], name=op.f('fk_judging_tasks_leased_to_assessors'), ondelete='SET NULL'),
    sa.ForeignKeyConstraint(['pool_item_id'], ['pool_items.id'], name=op.f('fk_judging_tasks_pool_item_id_pool_items'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_judging_tasks')),
    sa.UniqueConstraint('pool_item_id', 'round', name=op.f('uq_judging_tasks_pool_item_id_round'))
    )
    op.create_index('ix_judging_tasks_leased', 'judging_tasks', ['leased_to'], unique=False, postgresql_where=sa.text('done_at IS NULL'))
    op.create_index('ix_judging_tasks_open', 'judging_tasks', ['pool_item_id', 'round'], unique=False, postgresql_where=sa.text('done_at IS NULL'))
    op.create_table('pool_runs',
    sa.Column('pool_id', sa.Integer(), nullable=False),
    sa.Column('run_id', sa.Integer(), nullable=False),
    sa.ForeignKeyConstraint(['pool_id'], ['pools.id'], name=op.f('fk_pool_runs_pool_id_pools'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['run_id'], ['runs.id'], name=op.f('fk_pool_runs_run_id_runs'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('pool_id', 'run_id', name=op.f('pk_pool_runs'))
    )
    op.create_table('qrels_entries',
    sa.Column('qrels_version_id', sa.Integer(), nullable=False),
    sa.Column('topic_id', sa.Integer(), nullable=False),
    sa.Column('docno', sa.Text(), nullable=False),
    sa.Column('stratum', sa.Integer(), nullable=True),
    sa.Column('grade', sa.Integer(), nullable=False),
    sa.ForeignKeyConstraint(['qrels_version_id'], ['qrels_versions.id'], name=op.f('fk_qrels_entries_qrels_version_id_qrels_versions'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['topic_id'], ['topics.id'], name=op.f('fk_qrels_entries_topic_id_topics'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('qrels_version_id', 'topic_id', 'docno', name=op.f('pk_qrels_entries'))
    )
    op.create_table('judgement_changes',
    sa.Column('id', sa.BigInteger(), nullable=False),
    sa.Column('judgement_id', sa.BigInteger(), nullable=False),
    sa.Column('changed_by', sa.Integer(), nullable=True),
    sa.Column('old_verdict', postgresql.ENUM('relevant', 'not_relevant', 'unsure', name='verdict', create_type=False), nullable=True),
    sa.Column('new_verdict', postgresql.ENUM('relevant', 'not_relevant', 'unsure', name='verdict', create_type=False), nullable=False),
    sa.Column('changed_at', sa.DateTime(timezone=True), server_default=sa.text('now()'), nullable=False),
    sa.ForeignKeyConstraint(['changed_by'], ['assessors.id'], name=op.f('fk_judgement_changes_changed_by_assessors'), ondelete='SET NULL'),
    sa.ForeignKeyConstraint(['judgement_id'], ['judgements.id'], name=op.f('fk_judgement_changes_judgement_id_judgements'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_judgement_changes'))
    )
    op.create_index(op.f('ix_judgement_changes_judgement_id'), 'judgement_changes', ['judgement_id'], unique=False)
    op.create_table('leaderboard_snapshots',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('campaign_id', sa.Integer(), nullable=False),
    sa.Column('evaluation_id', sa.Integer(), nullable=False),
    sa.Column('content', postgresql.JSONB(astext_type=sa.Text()), nullable=False),
    sa.Column('published_at', sa.DateTime(timezone=True), server_default=sa.text('now()'), nullable=False),
    sa.ForeignKeyConstraint(['campaign_id'], ['campaigns.id'], name=op.f('fk_leaderboard_snapshots_campaign_id_campaigns'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['evaluation_id'], ['evaluations.id'], name=op.f('fk_leaderboard_snapshots_evaluation_id_evaluations'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_leaderboard_snapshots'))
    )
    op.create_index(op.f('ix_leaderboard_snapshots_campaign_id'), 'leaderboard_snapshots', ['campaign_id'], unique=False)
    op.create_table('scores',
    sa.Column('evaluation_id', sa.Integer(), nullable=False),
    sa.Column('run_id', sa.Integer(), nullable=False),
    sa.Column('measure', sa.String(length=64), nullable=False),
    sa.Column('topic', sa.String(length=64), nullable=False),
    sa.Column('value', sa.Double(), nullable=False),
    sa.ForeignKeyConstraint(['evaluation_id'], ['evaluations.id'], name=op.f('fk_scores_evaluation_id_evaluations'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['run_id'], ['runs.id'], name=op.f('fk_scores_run_id_runs'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('evaluation_id', 'run_id', 'measure', 'topic', name=op.f('pk_scores'))
    )


def downgrade() -> None:
    op.drop_table('scores')
    op.drop_index(op.f('ix_leaderboard_snapshots_campaign_id'), table_name='leaderboard_snapshots')
    op.drop_table('leaderboard_snapshots')
    op.drop_index(op.f('ix_judgement_changes_judgement_id'), table_name='judgement_changes')
    op.drop_table('judgement_changes')
    op.drop_table('qrels_entries')
    op.drop_table('pool_runs')
    op.drop_index('ix_judging_tasks_open', table_name='judging_tasks', postgresql_where=sa.text('done_at IS NULL'))
    op.drop_index('ix_judging_tasks_leased', table_name='judging_tasks', postgresql_where=sa.text('done_at IS NULL'))
    op.drop_table('judging_tasks')
    op.drop_table('judgements')
    op.drop_index(op.f('ix_evaluations_campaign_id'), table_name='evaluations')
    op.drop_table('evaluations')
    op.drop_index(op.f('ix_runs_team_id'), table_name='runs')
    op.drop_index(op.f('ix_runs_campaign_id'), table_name='runs')
    op.drop_table('runs')
    op.drop_index(op.f('ix_qrels_versions_campaign_id'), table_name='qrels_versions')
    op.drop_table('qrels_versions')
    op.drop_index('ix_pool_items_queue', table_name='pool_items')
    op.drop_table('pool_items')
    op.drop_index(op.f('ix_ground_truth_segments_topic_id'), table_name='ground_truth_segments')
    op.drop_table('ground_truth_segments')
    op.drop_table('assignments')
    op.drop_table('api_tokens')
    op.drop_index(op.f('ix_topics_campaign_id'), table_name='topics')
    op.drop_table('topics')
    op.drop_index(op.f('ix_teams_campaign_id'), table_name='teams')
    op.drop_table('teams')
    op.drop_index(op.f('ix_pools_campaign_id'), table_name='pools')
    op.drop_table('pools')
    op.drop_index('ix_collection_items_video', table_name='collection_items')
    op.drop_table('collection_items')
    op.drop_index(op.f('ix_blobs_campaign_id'), table_name='blobs')
    op.drop_table('blobs')
    op.drop_index(op.f('ix_assessors_campaign_id'), table_name='assessors')
    op.drop_table('assessors')
    op.drop_index(op.f('ix_analysis_jobs_campaign_id'), table_name='analysis_jobs')
    op.drop_table('analysis_jobs')
    op.drop_table('run_entries')
    op.drop_table('moment_entries')
    op.drop_table('campaigns')
    for name in ('verdict', 'role', 'campaign_status', 'task_kind'):
        sa.Enum(name=name).drop(op.get_bind(), checkfirst=True)
