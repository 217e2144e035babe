/** Vite raw imports (`import text from './file?raw'`): the file's text, in every test runtime. */
declare module '*?raw' {
  const text: string;
  export default text;
}
