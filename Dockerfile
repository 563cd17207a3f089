FROM python:3.12-slim
WORKDIR /app
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 MEMORYHUB_DATA_DIR=/data
COPY pyproject.toml README.md ./
COPY . .
RUN pip install --no-cache-dir ".[postgres]" && python manage.py collectstatic --noinput -v 0
EXPOSE 8000 8001
CMD ["gunicorn", "memoryhub.wsgi:application", "--bind", "0.0.0.0:8000"]
