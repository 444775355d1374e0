// node-zookeeper-client ships no types; nzc.ts, the one file that imports it, gives its
// exports a typed facade (and checks the internals it relies on at load).
declare module 'node-zookeeper-client' {
  const nzc: unknown;
  export = nzc;
}
declare module 'node-zookeeper-client/lib/Exception.js' {
  const exception: unknown;
  export = exception;
}
declare module 'node-zookeeper-client/lib/jute/index.js' {
  const jute: unknown;
  export = jute;
}
