# Stand-in for nats:2.9-alpine (see build.sh): Debian's nats-server 2.9 and wget (the compose
# health check uses it). Like the real image, arguments that start with '-' go to nats-server.
ARG BASE
FROM ${BASE}
RUN apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends nats-server wget >/dev/null \
 && rm -rf /var/lib/apt/lists/*
EXPOSE 4222 6222 8222
ENTRYPOINT ["nats-server"]
CMD ["-js"]
