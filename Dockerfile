# Build:  docker build -t basalt .        (podman: podman build --format docker -t basalt .)
# Run:    docker run -d -p 6379:6379 -v basalt-data:/data basalt

# ---- build stage: compile basalt-server with the same script as a checkout ----
FROM debian:bookworm AS build
WORKDIR /src
# Install the build dependencies in their own layer so that source changes do
# not reinstall them.
COPY tools/install-deps tools/install-deps
RUN tools/install-deps && rm -rf /var/lib/apt/lists/*
# RocksDB (tools/rocksdb: Debian's 9.10.0 source, release-built for any x86-64 CPU with SSE4.2)
# in its own layer too, before the sources are copied, so that only a change to tools/rocksdb
# builds it again. The source tarball and apt lists go; the built library stays for tools/build.
ENV BASALT_CACHE_DIR=/opt/basalt-cache
COPY tools/rocksdb tools/rocksdb
RUN tools/rocksdb && rm -rf "$BASALT_CACHE_DIR/src" "$BASALT_CACHE_DIR/apt"
COPY . .
RUN tools/build -DBASALT_BUILD_TESTS=OFF

# ---- runtime stage: the binary, its shared libraries and redis-cli ----
FROM debian:bookworm
RUN apt-get update \
 && apt-get install -y --no-install-recommends \
      liblz4-1 \
      libzstd1 \
      libjemalloc2 \
      libevent-2.1-7 \
      libevent-pthreads-2.1-7 \
      libgoogle-glog0v6 \
      libgflags2.2 \
      liblua5.1-0 \
      lua-cjson \
      lua-bitop \
      redis-tools \
 && rm -rf /var/lib/apt/lists/*
COPY --from=build /src/build/basalt-server /usr/local/bin/basalt-server
COPY conf/basalt.conf /etc/basalt/basalt.conf
# Fail the image build if a shared library the binary needs is not installed.
RUN ! ldd /usr/local/bin/basalt-server | grep 'not found'

VOLUME /data
WORKDIR /data
EXPOSE 6379
HEALTHCHECK CMD redis-cli -p 6379 ping | grep -q PONG
CMD ["basalt-server", "/etc/basalt/basalt.conf", "--bind", "0.0.0.0", "--dir", "/data", "--protected-mode", "no"]
