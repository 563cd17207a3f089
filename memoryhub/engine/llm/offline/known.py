"""Names whose kind is common knowledge: widely used software, cloud services and the
companies behind them. A name here is typed by what it is, whatever a verb beside it
suggests ("the platform team maintains Vault": Vault is a tool, not a project).

Only names that are almost never anything else in what people store about their work;
a name with a common meaning besides ("Go", "Rust", "Click", "Linear") is left to the
verbs."""

from __future__ import annotations

from ..schemas import EntityType

TOOLS = frozenset(
    """
    postgresql postgres mysql mariadb sqlite oracle-db mongodb mongo redis valkey memcached
    cassandra scylladb dynamodb cockroachdb clickhouse elasticsearch opensearch solr neo4j
    couchdb couchbase influxdb timescaledb snowflake bigquery redshift databricks
    duckdb supabase firebase firestore s3 gcs minio ceph kafka rabbitmq nats pulsar
    kinesis sqs sns celery sidekiq airflow dagster prefect dbt spark hadoop flink
    kubernetes k8s k3s docker podman helm nomad consul vault terraform opentofu pulumi
    ansible puppet chef packer vagrant nginx haproxy envoy traefik caddy istio linkerd
    prometheus grafana loki tempo datadog sentry honeycomb jaeger opentelemetry
    newrelic splunk kibana logstash fluentd pagerduty opsgenie statuspage jenkins
    circleci travis gitlab github bitbucket argocd flux spinnaker bazel gradle maven
    webpack vite npm yarn pnpm pip poetry conda homebrew git mercurial svn jira
    confluence notion trello asana slack teams zoom figma sketch miro vim neovim emacs
    vscode intellij pycharm webstorm datagrip xcode eclipse django flask fastapi rails
    laravel spring express nextjs nuxt react vue angular svelte jquery tailwind
    bootstrap pytorch tensorflow keras jax scikit-learn pandas numpy jupyter mlflow
    kubeflow huggingface openai-api langchain sqlalchemy prisma hibernate graphql grpc
    protobuf kotlin typescript javascript python java scala elixir erlang haskell
    clojure ruby php perl swift ubuntu debian fedora centos alpine windows macos linux
    android ios chrome firefox safari postman insomnia okta auth0 keycloak cloudflare
    fastly akamai heroku vercel netlify fly.io render railway aws gcp azure
    ec2 ecs eks fargate lambda rds aurora cloudfront route53 iam cloudwatch gke aks
    openshift rancher playwright selenium cypress jest pytest mocha junit storybook
    sendgrid mailgun twilio stripe-api amplitude mixpanel segment hotjar metabase
    looker tableau superset redash powerbi excel sheets airtable zapier retool
    """.split()
)
# Several words, or written with a space.
TOOLS_SPACED = frozenset(
    """vs code|visual studio code|visual studio|github actions|gitlab ci|google cloud|
    google docs|google sheets|elastic cloud|react native|ruby on rails|sql server|
    microsoft teams|apache kafka|apache spark|apache airflow|amazon s3|aws lambda|
    google kubernetes engine|azure devops|cloud run|app engine|power bi""".replace("\n", "")
    .replace("    ", "")
    .split("|")
)
ORGANISATIONS = frozenset(
    """google microsoft amazon apple meta facebook netflix stripe shopify atlassian
    oracle ibm intel nvidia salesforce adobe uber airbnb spotify twitter linkedin
    hashicorp elastic mozilla canonical redhat jetbrains anthropic""".split()
)


def known_type(name: str) -> EntityType | None:
    """The type common knowledge gives ``name`` ("Snowflake": a tool), or None."""
    folded = " ".join(name.casefold().split())
    if folded in TOOLS or folded in TOOLS_SPACED:
        return "tool"
    if folded in ORGANISATIONS:
        return "organisation"
    return None
