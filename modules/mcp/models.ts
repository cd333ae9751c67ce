/**
 * The models list_models offers while the controller has no ListModels call: the ones svc's
 * scorer supports (the README's Scoring section), by the names SVC_MODEL_DIR holds them under.
 */
import type { ModelList } from "./views.ts"

export const builtinModels: ModelList = {
  models: [
    {
      name: "vmaf_v0.6.1",
      default: true,
      description: "The standard VMAF model, trained for 1080p viewing on a TV at 3 screen heights"
    },
    {
      name: "vmaf_4k_v0.6.1",
      default: false,
      description: "VMAF for 4K (2160p) content viewed at 1.5 screen heights"
    }
  ],
  source: "svc-mcp's built-in list of the models svc's scorer supports"
}
