/**
 * The models list_models offers when the controller has no ListModels call (an older
 * controller): the ones svc's scorer supports by default, by the names it knows them under.
 */
import { extraFeatureList } from "../scorer/index.ts"
import { DEFAULT_MODEL, type ModelList } from "./views.ts"

export const builtinModels: ModelList = {
  models: [
    {
      name: DEFAULT_MODEL,
      default: true,
      usable: true,
      description: "The standard VMAF model, trained for 1080p viewing on a TV at 3 screen heights"
    },
    {
      name: "vmaf_4k_v0.6.1",
      default: false,
      usable: true,
      description: "VMAF for 4K (2160p) content viewed at 1.5 screen heights"
    }
  ],
  features: extraFeatureList().map((feature) => ({ ...feature, outputs: [...feature.outputs] })),
  source: "svc-mcp's built-in list (the controller does not offer ListModels)"
}
