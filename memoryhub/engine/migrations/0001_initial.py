"""The jobs (from the project) and the instance settings (from the fact store) move to
the engine: the rows stay, their tables are renamed, their permissions follow."""

import django.db.models.deletion
import django.utils.timezone
import memoryhub.engine.models
from django.conf import settings
from django.db import migrations, models

from memoryhub.engine.db.model_moves import content_types_moved


class Migration(migrations.Migration):

    initial = True

    dependencies = [
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
        ("contenttypes", "0002_remove_content_type_name"),
        ("memoryhub", "0003_role_preset_defaults"),
        ("facts", "0021_fact_keys_matching"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name='MemoryConfig',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('memory_enabled', models.BooleanField(default=True)),
                        ('embeddings_enabled', models.BooleanField(default=True)),
                        ('embeddings_provider', models.CharField(choices=[('local', 'Local (all-MiniLM-L6-v2, on this machine)'), ('openai', 'OpenAI-compatible /embeddings endpoint'), ('legacy', 'Legacy {model, prompt} endpoint')], default='local', max_length=16)),
                        ('embeddings_url', models.CharField(blank=True, default='', max_length=200, validators=[memoryhub.engine.models.validate_endpoint_url])),
                        ('embeddings_model', models.CharField(blank=True, default='', max_length=200)),
                        ('embeddings_api_key', models.CharField(blank=True, default='', max_length=500)),
                        ('recall_max_items', models.PositiveIntegerField(default=8)),
                        ('recall_char_budget', models.PositiveIntegerField(default=2000)),
                        ('recall_category_budget', models.JSONField(blank=True, default=dict)),
                        ('rrf_k', models.PositiveIntegerField(default=60)),
                        ('recall_tuning', models.JSONField(blank=True, default=dict)),
                        ('weight_importance', models.FloatField(default=0.15)),
                        ('weight_recency', models.FloatField(default=0.1)),
                        ('weight_access', models.FloatField(default=0.05)),
                        ('recency_half_life_days', models.FloatField(default=30.0)),
                        ('max_content_length', models.PositiveIntegerField(default=2000)),
                        ('max_active_facts', models.PositiveIntegerField(default=1000, help_text='Per owner scope; 0 = no cap.')),
                        ('dedupe_similarity', models.FloatField(default=0.92)),
                        ('distillation_enabled', models.BooleanField(default=False)),
                        ('distillation_every_hours', models.PositiveIntegerField(default=12)),
                        ('extraction_review_required', models.BooleanField(default=False)),
                        ('distillation_min_facts', models.PositiveIntegerField(default=12)),
                        ('distilled_at', models.DateTimeField(blank=True, editable=False, null=True)),
                        ('llm_url', models.CharField(blank=True, default='', max_length=200, validators=[memoryhub.engine.models.validate_endpoint_url])),
                        ('llm_model', models.CharField(blank=True, default='', max_length=200)),
                        ('llm_api_key', models.CharField(blank=True, default='', max_length=500)),
                        ('llm_error_count', models.PositiveIntegerField(default=0, editable=False)),
                        ('llm_last_error_at', models.DateTimeField(blank=True, editable=False, null=True)),
                        ('llm_last_error_kind', models.CharField(blank=True, default='', editable=False, max_length=16)),
                        ('llm_last_error_message', models.CharField(blank=True, default='', editable=False, max_length=300)),
                        ('fact_keys_version', models.PositiveIntegerField(default=0, editable=False)),
                        ('updated_at', models.DateTimeField(default=django.utils.timezone.now)),
                    ],
                    options={'db_table': 'facts_memoryconfig'},
                ),
                migrations.CreateModel(
                    name='Job',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('kind', models.CharField(db_index=True, max_length=32)),
                        ('state', models.CharField(choices=[('queued', 'Queued'), ('running', 'Running'), ('done', 'Done'), ('failed', 'Failed')], default='queued', max_length=16)),
                        ('progress', models.FloatField(default=0.0)),
                        ('arguments', models.JSONField(blank=True, default=dict)),
                        ('result', models.JSONField(blank=True, null=True)),
                        ('error', models.TextField(blank=True, default='')),
                        ('created_at', models.DateTimeField(default=django.utils.timezone.now)),
                        ('started_at', models.DateTimeField(blank=True, null=True)),
                        ('finished_at', models.DateTimeField(blank=True, null=True)),
                        ('owner', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='+', to=settings.AUTH_USER_MODEL)),
                    ],
                    options={
                        'db_table': 'memoryhub_job',
                        'ordering': ['-created_at', '-id'],
                        'indexes': [models.Index(fields=['owner', '-created_at'], name='job_owner_time')],
                    },
                ),
            ],
        ),
        migrations.AlterModelTable(name="memoryconfig", table=None),
        migrations.AlterModelTable(name="job", table=None),
        content_types_moved([("facts", "engine", "memoryconfig"), ("memoryhub", "engine", "job")]),
    ]
