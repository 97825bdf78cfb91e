# Build with the official Swift image on Debian; run on slim Debian with the runtime libraries only.
# The Swift version matches the toolchain the project builds with (test_packaging.py checks it).
FROM swift:6.3-bookworm AS build
RUN apt-get update -qq \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libsqlite3-dev libssl-dev libmicrohttpd-dev libnghttp2-dev zlib1g-dev \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
# Everything Package.swift declares must exist for the manifest to load (the example and the test
# targets too), so the build context is the manifest, Sources, Examples, Tests, the fuzz targets (a test target
# replays them), the shipped rules and the link order of the request paths' and start-up code (linker/).
# `make test` builds the package from exactly these paths (test_packaging.py), without Docker.
COPY Package.swift ./
COPY Sources ./Sources
COPY Examples ./Examples
COPY Tests ./Tests
COPY Fuzz/Sources ./Fuzz/Sources
COPY rules ./rules
COPY linker ./linker
# The Makefile's RELEASE_FLAGS (its `build` target explains each).
RUN swift build -c release --product hearth --static-swift-stdlib -Xswiftc -Xfrontend -Xswiftc -function-sections -Xswiftc -use-ld=lld \
      -Xlinker -z -Xlinker pack-relative-relocs \
      -Xlinker --symbol-ordering-file=/src/linker/hearth.order -Xlinker --no-warn-symbol-ordering \
 && cp "$(swift build -c release --show-bin-path)/hearth" /hearth

FROM debian:bookworm-slim
RUN apt-get update -qq \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
      libsqlite3-0 libssl3 libmicrohttpd12 libnghttp2-14 \
 && rm -rf /var/lib/apt/lists/*
COPY --from=build /hearth /usr/local/bin/hearth
COPY --from=build /src/rules /work/rules
WORKDIR /work
VOLUME ["/work/emulator-data"]
# hub, auth, firestore, s3, uploads API
EXPOSE 4400 9099 8080 9000 9199 8000 4000
ENTRYPOINT ["hearth"]
# Inside a container the listeners must bind every interface to be reachable through published
# ports. /work/rules/firestore.rules is found from the working directory (docker-compose mounts
# ./rules over it); without it hearth enforces the rules built into the binary.
CMD ["start", "--host", "0.0.0.0", "--data-dir", "/work/emulator-data"]
