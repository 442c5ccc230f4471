# kafkito in a container: the same `kafkito serve` as `make run`.
#
# Inside the container the broker binds 0.0.0.0: a port published by Docker reaches the container on
# its own network interface, never on its loopback, so a broker bound to 127.0.0.1 in here could not
# be reached at all. Who can reach it is decided where the port is published: `docker-compose.yml`
# publishes it on the host's 127.0.0.1 only (`docker run -p 127.0.0.1:9092:9092 ...` does the same).
# Clients are told to connect to `localhost:9092` (--advertised-host), the published address.
FROM python:3.11-slim
WORKDIR /app
COPY pyproject.toml README.md ./
# kafkito/ holds the links that install the three folders as kafkito.broker, .protocol, .purgatory.
COPY kafkito ./kafkito
COPY protocol ./protocol
COPY purgatory ./purgatory
COPY broker ./broker
RUN pip install --no-cache-dir .
EXPOSE 9092
VOLUME ["/data"]
ENTRYPOINT ["kafkito"]
CMD ["serve", "--host", "0.0.0.0", "--port", "9092", "--data-dir", "/data", "--advertised-host", "localhost"]
