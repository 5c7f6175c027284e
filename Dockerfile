FROM python:3.11-slim
WORKDIR /srv/trecpool
ENV PYTHONUNBUFFERED=1 PIP_NO_CACHE_DIR=1
COPY pyproject.toml README.md ./
COPY app ./app
COPY migrations ./migrations
RUN pip install -e .
EXPOSE 8000
# DATABASE_URL must point at PostgreSQL; migrations are applied before the server starts.
CMD ["sh", "-c", "trecpool db upgrade && trecpool serve --host 0.0.0.0 --port 8000"]
