import type * as TfModule from "@energetic-ai/core";

/**
 * The one TensorFlow.js of eqakit's embedded models: `@energetic-ai/core` bundles tfjs-core,
 * the graph-model converter and the WASM backend (with its .wasm files inside the package,
 * so nothing is fetched), and reads `file://` models itself. The detector and the sentence
 * encoder share it. `@vladmandic/human`'s node-wasm build is not used: it needs
 * `@tensorflow/tfjs-converter` as a separate package; eqakit runs Human's CenterNet model
 * file on this runtime with the same pre- and post-processing.
 */
let readyPromise: Promise<Tf> | undefined;

/** Loaded on first use only: the bundle is large, and most commands need no embedded model. */
export function embeddedTf(): Promise<Tf> {
  readyPromise ??= (async () => {
    const tf = await import("@energetic-ai/core");
    await tf.ready();
    registerMissingKernels(tf);
    return tf;
  })();
  return readyPromise;
}

/** CenterNet's graph uses Mod, which the WASM backend lacks: a − floor(a / b)·b. */
function registerMissingKernels(tf: Tf): void {
  const backend = tf.getBackend();
  if (!tf.getKernel("Mod", backend)) {
    tf.registerKernel({
      kernelName: "Mod",
      backendName: backend,
      kernelFunc: ({ inputs }) => {
        const a = inputs["a"] as TfModule.Tensor;
        const b = inputs["b"] as TfModule.Tensor;
        return tf.tidy(() => tf.sub(a, tf.mul(tf.floorDiv(a, b), b)));
      },
    });
  }
}

export type Tf = typeof TfModule;
