# kafkito in a container: the same `kafkito serve` as `make run`.
FROM python:3.11-slim
WORKDIR /app
COPY pyproject.toml README.md ./
COPY protocol ./protocol
COPY purgatory ./purgatory
COPY broker ./broker
RUN pip install --no-cache-dir .
EXPOSE 9092
VOLUME ["/data"]
ENTRYPOINT ["kafkito"]
CMD ["serve", "--host", "0.0.0.0", "--port", "9092", "--data-dir", "/data", "--advertised-host", "localhost"]
