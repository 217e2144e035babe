/** Vite raw imports (`import text from './file?raw'`): the file's text, in every test runtime. */
declare module '*?raw' {
  const text: string;
  export default text;
}

/** A `.wasm` file imported as a module: compiled by workerd (wrangler, vitest-pool-workers). */
declare module '*.wasm' {
  const module: WebAssembly.Module;
  export default module;
}
