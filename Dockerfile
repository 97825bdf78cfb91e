# Build with the official Swift image on Debian; run on slim Debian with the three runtime libraries.
FROM swift:6.1-bookworm AS build
RUN apt-get update -qq \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libsqlite3-dev libssl-dev libmicrohttpd-dev \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY Package.swift ./
COPY Sources ./Sources
RUN swift build -c release --product hearth --static-swift-stdlib \
 && cp "$(swift build -c release --show-bin-path)/hearth" /hearth

FROM debian:bookworm-slim
RUN apt-get update -qq \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
      libsqlite3-0 libssl3 libmicrohttpd12 ca-certificates \
 && rm -rf /var/lib/apt/lists/*
COPY --from=build /hearth /usr/local/bin/hearth
COPY rules /work/rules
WORKDIR /work
VOLUME ["/work/emulator-data", "/work/rules"]
# hub, auth, firestore, s3, uploads API
EXPOSE 4400 9099 8080 9000 8000
ENTRYPOINT ["hearth"]
# Inside a container the listeners must bind every interface to be reachable through published ports.
CMD ["start", "--host", "0.0.0.0", "--data-dir", "/work/emulator-data", "--rules", "/work/rules/firestore.rules"]
