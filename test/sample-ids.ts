/** Session ids of the bundled sample store (samples/store, see samples/README.md). */
export const REAL = 'session-904b047f-eb01-493f-b98a-391ecfae5b66';
export const TARGET = 'session-7d2f4c1a-93be-4f6e-8a05-c1e4b2d97a30';
export const COMPACTED = 'session-2b8e61d4-0f3a-4c7b-b9d2-5e7a1c3f9084';
export const ENVELOPED = 'session-c5a09e7b-4d1f-4b28-a6e3-8f2d0b7c1e59';
export const CJK = '会话-设计笔记-🚀-e5f1c2a0';
export const VERSIONS = 'session-91f4b0c6-2e7d-4a83-bd15-6c0e9a4f27d8';
export const LARGE = 'session-4e6a2d9f-b1c8-47e0-9f35-a8d21c6b0e74';
