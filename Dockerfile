FROM python:3.11-slim
WORKDIR /srv/trecpool
ENV PYTHONUNBUFFERED=1 PIP_NO_CACHE_DIR=1 TRECPOOL_HOST=0.0.0.0 TRECPOOL_PORT=8000 TRECPOOL_DATA_DIR=/srv/trecpool/data
COPY pyproject.toml README.md ./
COPY app ./app
COPY migrations ./migrations
# The README's Quick start install: the runtime dependencies only, no extras.
RUN pip install -e .
EXPOSE 8000
# DATABASE_URL must point at PostgreSQL (docker-compose.yml sets it). Migrations are applied first; `serve` also runs
# an embedded job worker (more workers: `trecpool worker`). TRECPOOL_DEMO=1 loads the demo campaign on start.
CMD ["sh", "-c", "trecpool db upgrade && exec trecpool serve"]
