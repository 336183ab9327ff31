# One image for web, worker and beat; settings come from the environment.
FROM python:3.11-slim
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 DJANGO_SETTINGS_MODULE=hxportal.settings.production
WORKDIR /app
COPY pyproject.toml README.md ./
COPY hxportal ./hxportal
COPY allocation ./allocation
COPY health ./health
COPY simulation ./simulation
COPY recommendations ./recommendations
COPY dashboard ./dashboard
COPY metrics ./metrics
COPY whatif ./whatif
RUN pip install --no-cache-dir .
COPY . .
RUN SECRET_KEY=build DATABASE_URL=sqlite:////tmp/build.sqlite3 ALLOWED_HOSTS=build \
    python manage.py collectstatic --noinput -v0
# data/checkpoints exists in the image, owned by hx, so the named volume mounted there
# (docker-compose.yml) starts writable by the worker.
RUN useradd --system --uid 1000 hx && mkdir -p /app/data/checkpoints && chown -R hx /app/data
USER hx
EXPOSE 8000
CMD ["gunicorn", "hxportal.wsgi:application", "--bind", "0.0.0.0:8000", "--workers", "3"]
