// SPDX-License-Identifier: Apache-2.0
// Types of the stepcalc ES module (wasm/stepcalc.js). Units are in field names:
// _us microseconds, _s seconds, _bytes bytes; MFU is a fraction of peak (0..1).

/** A HuggingFace config.json object (only the fields the model reads are typed). */
export interface ModelConfig {
  num_hidden_layers?: number;
  hidden_size?: number;
  num_attention_heads?: number;
  num_key_value_heads?: number;
  num_kv_heads?: number;
  multi_query_group_num?: number;
  intermediate_size?: number;
  ffn_hidden_size?: number;
  torch_dtype?: string;
  dtype?: string;
  /** Overrides the dtype's bytes per parameter. */
  bytes_per_param?: number;
  vocab_size?: number;
  text_config?: ModelConfig;
  [key: string]: unknown;
}

/** The phase that sets a step's time (`overhead` for an empty step). */
export type Bound = 'overhead' | 'prefill' | 'decode';

/** Overrides of the GPU's constants (names as in the reference hardware file). */
export interface HardwareOverrides {
  /** Dense BF16 peak, TFLOP/s. */
  TFlopsPeak?: number;
  /** HBM bandwidth, TB/s. */
  BwPeakTBs?: number;
  /** 0 (none) or in (0, 1]. */
  bwEfficiencyFactor?: number;
  /** CPU microseconds per layer (divided by tp). */
  perLayerOverhead?: number;
}

export interface PrefillRequest {
  /** Tokens already processed (cached prefix or earlier chunks). */
  progress_index: number;
  /** Tokens processed in this step. */
  num_new_prefill_tokens: number;
}

export interface DecodeRequest {
  /** Tokens in the request's KV cache. */
  progress_index: number;
  /** Ignored by the model (always one token). */
  num_new_decode_tokens?: number;
}

export interface Step {
  prefill_requests?: PrefillRequest[];
  decode_requests?: DecodeRequest[];
}

/**
 * blis-v2: the reference (default); corrected: its fixes as switches; measured: vLLM's operators from measured
 * kernels (docs/MEASURED-MODE.md).
 */
export type Mode = 'blis-v2' | 'corrected' | 'measured';

export type CorrectedSwitch =
  | 'decode_harmonic_mean'
  | 'decode_attention_latency'
  | 'prefill_attention_length'
  | 'gemm_roofline'
  | 'tp_allreduce'
  | 'cpu_overhead'
  | 'fused_mixed_batch';

export type CorrectedParam =
  | 'gemm_table_peak_tflops'
  | 'allreduce_latency_us'
  | 'nvlink_bw_gbs'
  | 'cpu_step_us'
  | 'cpu_per_request_us';

/** Switches and parameters of the corrected model (docs/CORRECTED-MODE.md). */
export interface CorrectedOptions {
  switches?: Partial<Record<CorrectedSwitch, boolean>>;
  params?: Partial<Record<CorrectedParam, number>>;
}

/** One pricing request: the CLI's request format (and the conformance-case format). */
export interface Request {
  /** A preset name (see presets()) or a HuggingFace config object. */
  model: string | ModelConfig;
  step: Step;
  /** The GPU (case-insensitive); default H100. See presets().gpu_specs. */
  gpu?: GpuName | string;
  /** The measured kernel tables' vLLM version, e.g. "vllm-0.24.0"; default: the GPU's (docs/KERNELS.md). */
  kernels?: string;
  hardware?: HardwareOverrides;
  tp?: number;
  /**
   * Expert-parallel size of a MoE model's experts: 1 (each expert sliced over tp x dp GPUs) or tp x dp
   * (whole experts spread over them; docs/SERVING.md, "Layouts");
   * default 1. Above 1 in the reference modes: refused, code 'unsupported' (measured mode only).
   */
  ep?: number;
  /** Data-parallel ranks (with ep 1 or tp x dp for a MoE model); default 1. Above 1: measured mode only. */
  dp?: number;
  mode?: Mode;
  /**
   * Measured mode: the format every linear layer runs in; "none" (default) the checkpoint's own (a checkpoint
   * already of the format keeps its own modules). A format the GPU's tables do not measure is refused with code
   * 'unsupported' at "quantization" (docs/KERNELS.md lists what each GPU measures).
   */
  quantization?: 'none' | 'fp8' | 'nvfp4' | 'mxfp4' | 'int4';
  /** Measured mode: the KV-cache dtype as vLLM names it; "auto" (default) is the checkpoint's (FP8 when its
   * quantization config says so, else 16-bit). */
  kv_cache_dtype?: 'auto' | 'bf16' | 'bfloat16' | 'fp8' | 'fp8_e4m3' | 'fp8_e5m2';
  /** 'summary': the result at summary detail (SummaryResult); default 'full'. */
  detail?: Detail;
  corrected?: CorrectedOptions;
  id?: string;
  model_name?: string;
  tags?: string[];
  expected?: { step_time_us?: number; [key: string]: unknown };
  /** vLLM engine settings for memory and serving; left out: vLLM's defaults on that GPU. */
  engine?: EngineSettings;
  /** The serving workload (calc.serve); price() checks it and ignores it. */
  workload?: Workload;
  /** Price of one GPU-hour, for serve()'s cost figures; price() ignores it. */
  gpu_hour_usd?: number;
}

/** `vllm serve` settings (docs/SERVING.md); each left out takes vLLM's default for the GPU. */
export interface EngineSettings {
  max_num_batched_tokens?: number;
  max_num_seqs?: number;
  gpu_memory_utilization?: number;
  block_size?: 1 | 8 | 16 | 32 | 64 | 128;
  enable_chunked_prefill?: boolean;
}

/** A request length: a whole number of tokens, or a distribution (seeded by workload.seed). */
export type Length =
  | number
  | { distribution: 'fixed'; mean: number }
  | { distribution: 'uniform'; min: number; max: number }
  | { distribution: 'normal'; mean: number; stddev: number; min?: number; max?: number }
  | { distribution: 'exponential'; mean: number; min?: number; max?: number };

/** The traffic of a serving estimate: `concurrency` (closed loop) or `request_rate` (open loop). */
export interface Workload {
  input_tokens: Length;
  output_tokens: Length;
  concurrency?: number;
  /** Requests per second, Poisson arrivals. */
  request_rate?: number;
  /** Default 10 x concurrency, at least 32. */
  num_requests?: number;
  /** The first N requests issued are simulated but left out of every figure; 0 to num_requests - 1, default 0. */
  warmup_requests?: number;
  /**
   * Closed loop with a warm-up: the measured requests start once every warm-up request has
   * finished, all clients at once (a benchmark client's warm-up phase); false: each client goes
   * straight on. Default true.
   */
  warmup_drain?: boolean;
  prefix_cache_hit_ratio?: number;
  seed?: number;
  /** API-server time per request; default: the value fitted on the measured runs. */
  api_overhead_ms?: number;
}

/** A serving request: a pricing request whose step is optional and ignored. */
export interface ServeRequest extends Omit<Request, 'step'> {
  step?: Step;
  workload: Workload;
  /** Price of one GPU-hour, for the cost figures. */
  gpu_hour_usd?: number;
}

/** What vLLM holds on each GPU, and the KV cache that leaves (docs/SERVING.md). Bytes per GPU. */
export interface Memory {
  gpu: string;
  tp: number;
  gpu_memory_bytes: number;
  gpu_memory_utilization: number;
  budget_bytes: number;
  weights_bytes: number;
  activation_bytes: number;
  non_torch_bytes: number;
  kv_cache_bytes: number;
  kv_bytes_per_token: number;
  /** Tokens per block (a gated DeltaNet model: the attention block vLLM's hybrid allocator sizes). */
  block_size: number;
  kv_cache_blocks: number;
  kv_cache_tokens: number;
  cuda_graph_bytes: number;
  headroom_bytes: number;
  fits: boolean;
  /** Gated DeltaNet models only: the attention and state groups, one page, each request's fixed state. */
  kv_full_groups?: number;
  kv_state_groups?: number;
  page_bytes?: number;
  state_bytes_per_layer?: number;
  state_bytes_per_request?: number;
}

/** mean and percentiles (linear between ranks) over `count` values. */
/** Latency statistics over the measured requests (TTFT and E2E: every request has them). */
export interface LatencyStats {
  mean: number;
  p50: number;
  p90: number;
  p99: number;
  count: number;
}

/**
 * TPOT and ITL statistics: with count 0 (nothing measured: every request generated one token)
 * every figure is null, never 0.
 */
export type GapStats = LatencyStats | { mean: null; p50: null; p90: null; p99: null; count: 0 };

/** A serving estimate (docs/SERVING.md). */
/** An open loop's steady window and whether the engine keeps up with the offered rate. */
export interface SteadyState {
  window_s: number;
  /** workload.request_rate: the mean rate of the (Poisson) arrivals. */
  offered_request_rate: number;
  /** Requests finished per second inside the window. */
  completed_request_rate: number;
  /** Overloaded: what the engine finishes per second while it works through its queue; else 0. */
  sustainable_request_rate: number;
  /** Growth of the requests in the engine per second: overloaded, offered minus sustainable; else the trend. */
  queue_growth_per_s: number;
  /** Requests waiting (one rank) when the last request was sent. */
  waiting_at_end: number;
  /** The window's length over the mean end-to-end latency; settled needs at least 10. */
  latencies_in_window: number;
  /** Share of the window's time whose engine steps left requests waiting (0.9 or more: saturated). */
  queued_share: number;
  /** The queue grows: latencies depend on the run's length (warning serving_overload). */
  overloaded: boolean;
  /** Not overloaded and the window spans enough latencies (else warning serving_not_settled). */
  settled: boolean;
  /** Simulations run: without num_requests, passes of 64, 256, 1,024, 4,096 requests until settled. */
  passes: number;
}

export interface ServeResult {
  id?: string;
  mode: Mode;
  model: string;
  gpu: string;
  tp: number;
  engine: Required<Omit<EngineSettings, 'enable_chunked_prefill'>>;
  workload: {
    input_tokens: Length;
    output_tokens: Length;
    concurrency?: number;
    request_rate?: number;
    num_requests: number;
    /** Present when the request gave a warm-up (> 0): those requests are in no figure. */
    warmup_requests?: number;
    /** Present for a closed loop with a warm-up: whether it was drained before the measured requests. */
    warmup_drain?: boolean;
    prefix_cache_hit_ratio: number;
    seed: number;
    api_overhead_ms: number;
    mean_input_tokens: number;
    mean_output_tokens: number;
  };
  ttft_ms: LatencyStats;
  tpot_ms: GapStats;
  itl_ms: GapStats;
  e2e_ms: LatencyStats;
  throughput: {
    output_tokens_per_s: number;
    input_tokens_per_s: number;
    requests_per_s: number;
    output_tokens_per_s_per_gpu: number;
    requests_per_s_per_gpu: number;
  };
  /** Only with gpu_hour_usd. */
  cost?: {
    gpu_hour_usd: number;
    usd_per_million_output_tokens: number;
    usd_per_million_input_tokens: number;
    usd_per_million_tokens_blended: number;
  };
  /**
   * Open loop only: the steady window, from the first measured request's send to the last request's send
   * (docs/SERVING.md, "Steady state and overload"). Rates are the engine's (every data-parallel rank).
   */
  steady_state?: SteadyState;
  duration_s: number;
  steps: number;
  scheduler: {
    busy_s: number;
    mean_running: number;
    mean_step_tokens: number;
    peak_running: number;
    peak_waiting: number;
    peak_kv_blocks_used: number;
    preemptions: number;
  };
  memory: Memory;
  /**
   * The accuracy ledger's subset nearest this request (same GPU, weight precision, dense/MoE kind and kind of layout
   * (data-parallel or not), nearest TP, EP and DP; docs/VALIDATION.md): its priced runs and the MAPE and bias (the
   * mean signed error, predicted - measured over measured: negative where the estimates ran low) of mean TTFT and
   * TPOT, in percent; or none.
   */
  validation: ServeValidation;
  warnings: Warning[];
}

export type ServeValidation =
  | { subset: string; gpu: string; precision: 'bf16' | 'fp8' | 'nvfp4' | 'mxfp4' | 'int4_wo'; moe: boolean; tp: number;
    /** The runs the figures are over; runs_left_out: the subset's runs that measured fewer requests in
     * flight than clients (docs/VALIDATION.md, "The error beside an estimate"). */
    runs: number; runs_left_out: number;
    ttft_mape: number; tpot_mape: number; ttft_bias: number; tpot_bias: number }
  | { subset: null; note: 'no measured runs like this' };

export interface ServeOptions {
  mode?: Mode | '';
  /** Called with the finished share (0..1) every few hundred engine steps; return false to cancel. */
  onProgress?: (share: number) => boolean | void;
}

/** A deployment plan's request (docs/PLAN.md). */
export interface PlanRequest {
  /** A preset name or a HuggingFace config object. */
  model: string | ModelConfig;
  /** Candidate GPUs; default every GPU with measured tables. */
  gpus?: Array<GpuName | string>;
  /** One GPU-hour per GPU (or one price for all); default presets/prices.json's assumptions. */
  gpu_hour_usd?: number | Partial<Record<GpuName, number>>;
  /** As serve's; num_requests and warmup_requests default to the planner's steady-state counts. */
  workload: Workload;
  slo: { ttft_ms?: number; tpot_ms?: number; e2e_ms?: number; percentile?: 50 | 90 | 99 };
  search?: {
    tp?: number[];
    /**
     * Data-parallel ranks to try (a MoE model's, with every expert_parallel; a dense model refuses dp > 1);
     * default [1].
     */
    dp?: number[];
    /**
     * Expert parallelism to try (a MoE model's): false slices every expert over tp x dp, true spreads them over tp x dp
     * (--enable-expert-parallel); default [false, true] for a MoE model. A dense model tries false only.
     */
    expert_parallel?: boolean[];
    /** Replicas x tp x dp at most. */
    max_gpus?: number;
    engine?: EngineSettings[];
    kv_cache_dtype?: Array<'auto' | 'bf16' | 'bfloat16' | 'fp8' | 'fp8_e4m3' | 'fp8_e5m2'>;
    quantization?: Array<'none' | 'fp8' | 'nvfp4' | 'mxfp4' | 'int4'>;
  };
  /** Settings every candidate starts from (search.engine values override them). */
  engine?: EngineSettings;
  /** The Hugging Face id the vllm serve line names; default the preset's. */
  hf_model?: string;
}

export type PlanReason = 'does_not_fit' | 'invalid' | 'kv_bound' | 'overload' | 'ttft' | 'tpot' | 'e2e' | 'max_gpus';

type PlanLatency = { mean: number; p50: number; p90: number; p99: number };

/** One configuration the plan tried. Figures are one replica's unless "total". */
export interface PlanCandidate {
  gpu: string;
  tp: number;
  /** 1 (every expert sliced over tp x dp GPUs) or tp x dp (--enable-expert-parallel). */
  ep: number;
  /** Data-parallel ranks of one replica. */
  dp: number;
  replicas: number;
  /** replicas x tp x dp. */
  gpus_total: number;
  kv_cache_dtype: string;
  quantization: string;
  meets_slo: boolean;
  reason: PlanReason | null;
  /** Why it misses the target (absent when it meets it). */
  reason_message?: string;
  engine: { max_num_seqs: number; max_num_batched_tokens: number; gpu_memory_utilization: number };
  gpu_hour_usd: number;
  cost_per_hour_usd: number;
  memory: { fits: boolean; weights_bytes: number; budget_bytes: number; kv_cache_tokens: number };
  /** The rest only for simulated candidates (not for does_not_fit or invalid). */
  replica_workload?: { request_rate?: number; concurrency?: number; num_requests: number; warmup_requests: number };
  ttft_ms?: PlanLatency;
  tpot_ms?: PlanLatency;
  e2e_ms?: PlanLatency;
  ttft_ms_at_percentile?: number;
  tpot_ms_at_percentile?: number;
  e2e_ms_at_percentile?: number;
  throughput?: {
    output_tokens_per_s: number;
    requests_per_s: number;
    output_tokens_per_s_per_gpu: number;
    output_tokens_per_s_per_user: number;
  };
  usd_per_million_input_tokens?: number;
  usd_per_million_output_tokens?: number;
  usd_per_million_tokens_blended?: number;
  /** Open-loop requests per second one replica serves within the target (0: none). */
  max_request_rate?: number;
  max_request_rate_total?: number;
  scheduler?: { preemptions: number; peak_waiting: number; mean_running: number };
  validation?: ServeValidation;
}

export interface PlanResult {
  mode: 'measured';
  model: string;
  hf_model: string;
  slo: { ttft_ms?: number; tpot_ms?: number; e2e_ms?: number; percentile: 50 | 90 | 99 };
  workload: { request_rate?: number; concurrency?: number };
  gpu_hour_usd: Record<string, number>;
  prices_source: string;
  search: { candidates: number; simulations: number; simulated_requests: number; requests_per_simulation: number;
    max_gpus: number };
  candidates: PlanCandidate[];
  /** Indices into candidates: the Pareto set of output tokens/s per GPU against per user. */
  frontier: number[];
  recommended: null | {
    candidate: number;
    gpu: string;
    tp: number;
    ep: number;
    dp: number;
    replicas: number;
    gpus_total: number;
    cost_per_hour_usd: number;
    usd_per_million_tokens_blended: number;
    vllm_serve: string;
    summary: string;
    headroom: { request_rate: number; ratio: number };
    /** One replica's request for serve(): re-served alone it meets the target. */
    serve_request: ServeRequest;
  };
  /** When nothing meets the target: the candidate nearest it and why it fails. */
  closest: null | { candidate: number; reason: PlanReason; reason_message: string };
}

export interface PlanOptions {
  /** Called with the share of candidates done (0..1); return false to cancel. */
  onProgress?: (share: number) => boolean | void;
  /** Aborting it cancels the plan (checked while loading tables and between simulations). */
  signal?: AbortSignal;
}

export interface Provenance {
  how: 'exact' | 'interpolated' | 'clamped' | 'fallback' | 'floor';
  row?: number;
  clamped_low?: boolean;
  clamped_high?: boolean;
  missing_corner?: boolean;
}

export interface GemmTerm {
  kind: 'q' | 'k' | 'v' | 'o' | 'gate' | 'up' | 'down';
  m: number;
  k: number;
  n: number;
  flops_per_layer: number;
  mfu: number;
  compute_s_per_layer: number;
  weight_floor_s_per_layer: number;
  floor_won: boolean;
  /** gemm_roofline: the measured kernel's time at this M scaled to (k, n), per layer. */
  kernel_floor_s_per_layer?: number;
  time_s: number;
  lookup: Provenance & {
    table_pair: [number, number];
    pair_exact: boolean;
    /** No measured pair covers the shape: the largest one was used. */
    pair_largest?: boolean;
    m_rows: [number, number];
    /** Position between the two M rows (0..1). */
    m_rows_t?: number;
  };
}

export interface MemoryBytes {
  weights: number;
  kv_read: number;
  kv_write: number;
  activations: number;
}

export interface Phase {
  compute_s: number;
  memory_s: number;
  time_s: number;
  bound_by: 'compute' | 'memory';
  gemm_time_s: number;
  attn_core_time_s: number;
  attn_core_flops: number;
  comm_s?: number;
  memory_bytes: MemoryBytes;
}

export interface PrefillBucket {
  bucket: number;
  num_requests: number;
  total_new_tokens: number;
  attn_mfu: number;
  attn_core_flops: number;
  attn_core_time_s: number;
  gemm_time_s: number;
  attn_lookup: Provenance & { table: string; seq_rows: [number, number]; seq_rows_t?: number };
  gemms: GemmTerm[];
}

export interface DecodeLookup extends Provenance {
  kv_len: number;
  count: number;
  mfu: number;
  bs_rows: [number, number];
  kv_rows: [number, number];
  /** Positions between the two batch / KV rows (0..1). */
  bs_rows_t?: number;
  kv_rows_t?: number;
}

/** The reference's flat breakdown (field for field as in the conformance files). */
export interface Breakdown {
  prefill_compute_s: number;
  prefill_memory_s: number;
  decode_compute_s: number;
  decode_memory_s: number;
  gemm_time_s: number;
  attn_core_time_s: number;
  overhead_us: number;
  decode_gemm_time_s: number;
  decode_attn_core_time_s: number;
  decode_attn_core_flops: number;
  decode_attn_effective_mfu: number;
  prefill_gemm_time_s: number;
  prefill_attn_core_time_s: number;
  prefill_buckets: Array<Omit<PrefillBucket, 'attn_lookup' | 'gemms'>>;
  step_hardware_s: number;
  total_us_before_rounding: number;
  min_step_floor_applied: boolean;
}

export interface Warning {
  code: string;
  message: string;
}

/** The priced step (docs/RESULT.md). */
export interface Result {
  id?: string;
  mode: Mode;
  step_time_us: number;
  step_time_ms: number;
  bound: Bound;
  tokens: { prefill: number; decode: number; total: number };
  tokens_per_s: number;
  attn_config_model: string;
  attn_config_used: string;
  decode_mfu_tp_used: number;
  overhead_us: number;
  breakdown: Breakdown;
  phases: {
    prefill: (Phase & { num_requests: number; new_tokens: number; buckets: PrefillBucket[] }) | null;
    decode: (Phase & { batch_size: number; attn_effective_mfu: number; attn_lookups: DecodeLookup[];
      gemms: GemmTerm[] }) | null;
  };
  corrected?: {
    switches: Record<CorrectedSwitch, boolean>;
    params: Record<CorrectedParam, number>;
    [key: string]: unknown;
  };
  /** Measured mode only: every operator of the step (docs/RESULT.md, "measured"). */
  measured?: MeasuredSection;
  model: ModelShape & { name: string; source: string };
  hardware: Required<HardwareOverrides> & { gpu: string };
  tp: number;
  /** Memory per GPU as vLLM would plan it (when the GPU's memory figures are known). */
  memory?: Memory;
  warnings: Warning[];
}

/** One operator of a measured step: its shape per GPU, table cells, time, bytes, FLOPs, bound. */
export interface MeasuredOperator {
  name: string;
  kind: 'gemm' | 'attention' | 'moe' | 'all_reduce' | 'gather' | 'elementwise' | 'linear_attention';
  /** attention_layer, linear_layer: the full-attention or gated DeltaNet layers of a hybrid model. */
  scope: 'layer' | 'dense_layer' | 'moe_layer' | 'step' | 'attention_layer' | 'linear_layer';
  /** Instances in the step (layers x per layer, or 1). */
  count: number;
  /** M of a GEMM, tokens of the others (CUDA-graph padded), requests for the LM head and sampler. */
  rows: number;
  n?: number;
  k?: number;
  hidden?: number;
  intermediate?: number;
  experts?: number;
  top_k?: number;
  elements?: number;
  dtype?: KernelDtype;
  time_us_each: number;
  time_us: number;
  bytes: number;
  flops: number;
  bound: 'compute' | 'memory' | 'launch' | 'communication' | 'module';
  /** The table read ("gemm", "moe", "allreduce", ..., "none" for a modelled cost). */
  table?: string;
  how?: string;
  /** The table cells with their CSV lines, or the modelled cost in words. */
  cells?: string;
  /**
   * A table outlier: the lower-precision table asked for gave `us` here, slower than bf16 for the
   * same work; the bf16 time (`time_us_each`, `cells`) is used instead (docs/KERNELS.md).
   */
  table_outlier?: { dtype: KernelDtype; us: number };
  /** Attention: the launch's fixed cost and each phase's variable work per layer, and the lookups. */
  fixed_us?: number;
  decode_us?: number;
  prefill_us?: number;
  lookups?: Array<{ phase: 'prefill' | 'decode'; batch: number; length: number; prefix: number; count: number;
    time_us: number; table: string; how: string; cells: string }>;
}

export interface MeasuredSection {
  gpu: GpuName;
  kernels: string;
  gpu_time_us: number;
  cpu_time_us: number;
  cpu: { step_us: number; per_request_us: number; requests: number };
  rows: { tokens: number; padded_tokens: number; sampled: number };
  totals_us: { gemm: number; attention: number; moe: number; communication: number; elementwise: number;
    prefill: number; decode: number };
  constants: { hbm_bytes_per_s: number; launch_floor_us: number; decode_fixed_us: number; prefill_fixed_us: number;
    max_graph_tokens: number };
  weight_bytes_per_gpu: number;
  kv_bytes_per_token_per_gpu: number;
  kv_cache_dtype: KernelDtype;
  operators: MeasuredOperator[];
}

export interface ErrorInfo {
  code: string;
  path: string;
  message: string;
}

export type SweepAxis = 'prefill_tokens' | 'decode_batch' | 'decode_kv' | 'tp';

export type SweepPoint =
  | { value: number; step_time_us: number; total_us: number; bound: Result['bound']; prefill_s: number;
    decode_s: number }
  | { value: number; error: ErrorInfo };

/** A model's shape as the core resolves it (after the KV-head and FFN fallbacks). */
export interface ModelShape {
  num_hidden_layers: number;
  hidden_size: number;
  num_attention_heads: number;
  num_key_value_heads: number;
  intermediate_size: number;
  bytes_per_param: number;
  vocab_size: number;
  head_dim: number;
}

export interface ModelPreset extends ModelShape {
  name: string;
  torch_dtype: string;
  notes: string[];
}

export type GpuName = 'H100' | 'H200' | 'B200' | 'A100' | 'L40S' | 'B300' | 'GB200' | 'GB300' | 'RTX-PRO-6000' | 'B60' |
  'H100-PCIe' | 'A100-PCIe' | 'A30' | 'L4';

/** A GPU's constants (presets/gpus/, from AIConfigurator's systems files). */
export interface GpuSpec {
  name: GpuName;
  device: string;
  memory_bytes: number;
  hbm_bw_bytes_per_s: number;
  bf16_tflops: number;
  /** 0: no FP8 tensor cores (A100). */
  fp8_tflops: number;
  int8_tflops: number;
  interconnect: 'NVLink' | 'PCIe';
  /** GPU to GPU, per GPU, one direction (PCIe for L40S, RTX PRO 6000, B60). */
  nvlink_bw_bytes_per_s: number;
  pcie_bw_bytes_per_s: number;
  /** Between nodes, per GPU, one direction (the fabric an expert-parallel group beyond a node crosses). */
  inter_node_bw_bytes_per_s: number;
  gpus_per_node: number;
  other_mem_bytes: number;
  /** NCCL buffers at TP 1, 2, 4, 8. */
  nccl_mem_bytes: number[];
  /** AIConfigurator's system name (e.g. "b300_sxm"), accepted as the GPU's name. */
  aic_system: string;
  /**
   * A GPU with datasheet constants only: the GPU whose measured tables the measured mode reads
   * and scales to this one (warning gpu_tables_scaled). Absent when the GPU has its own.
   */
  kernels_from?: GpuName;
  /** Measured kernel table versions, e.g. ["vllm-0.14.0", "vllm-0.24.0"] (the sibling's, with kernels_from). */
  kernels: string[];
  default_kernels: string;
  source: string;
}

/** A measured table's dtype: weights (GEMM, MoE) or KV cache (attention: bf16 or fp8). */
export type KernelDtype = 'bf16' | 'fp8' | 'fp8_block' | 'nvfp4' | 'mxfp4' | 'int4';

/** One GPU and version of the measured kernel tables: its pack files and what they cover. */
export interface KernelSet {
  gpu: GpuName;
  version: string;
  default: boolean;
  parts: Array<{ name: KernelPart; file: string; bytes: number; gzip_bytes: number }>;
  coverage: {
    gemm_dtypes: KernelDtype[];
    kv_dtypes: KernelDtype[];
    attention_head_dims: number[];
    allreduce_tps: number[];
    moe_dtypes: KernelDtype[];
    /** Per experts' dtype, the MoE shapes measured: [hidden, intermediate, experts, topk]. */
    moe_shapes: Partial<Record<KernelDtype, Array<[number, number, number, number]>>>;
    mla: boolean;
    /** Gated DeltaNet (linear attention) tables: the `gdn` part. */
    gdn: boolean;
    /** DeepSeek sparse attention (DeepSeek-V3.2) module tables: the `dsa` part. */
    dsa: boolean;
    /** Kimi delta attention (Kimi-Linear) tables: the `kda` part. */
    kda: boolean;
  };
}

export type KernelPart = 'gemm-bf16' | 'gemm-fp8' | 'gemm-fp8_block' | 'gemm-nvfp4' | 'attention-bf16' |
  'attention-fp8' | 'allreduce' | 'moe' | 'moe-fp8_block' | 'moe-nvfp4' | 'moe-mxfp4' | 'moe-int4' | 'mla' |
  'gdn' | 'dsa' | 'kda';

/** How much of a pricing to return: the headline only, or the whole breakdown. */
export type Detail = 'summary' | 'full';

/**
 * A result at summary detail (docs/RESULT.md): each field equals its counterpart in the
 * full Result (total_us = breakdown.total_us_before_rounding; prefill_s and decode_s =
 * phases.*.time_s, 0 without that phase; warning_codes = the distinct warnings[].code
 * in the catalogue's order, presets().warning_codes).
 */
export interface SummaryResult {
  id?: string;
  mode: Mode;
  detail: 'summary';
  step_time_us: number;
  total_us: number;
  bound: Result['bound'];
  prefill_s: number;
  decode_s: number;
  overhead_us: number;
  warning_codes: string[];
}

/**
 * Summaries of many points as columns, entry i for point i: numbers as typed arrays
 * (NaN where the point failed), `bound` null and the error in `errors` there. Equal
 * warning sets share one frozen array.
 */
export interface SummaryColumns {
  readonly length: number;
  readonly step_time_us: Float64Array;
  readonly total_us: Float64Array;
  readonly prefill_s: Float64Array;
  readonly decode_s: Float64Array;
  readonly overhead_us: Float64Array;
  readonly bound: Array<Result['bound'] | null>;
  readonly warning_codes: ReadonlyArray<readonly string[]>;
  readonly errors: Array<ErrorInfo & { index: number }>;
}

/** A 2-D sweep: entry i * width + j is y.values[i] with x.values[j]. */
export interface SweepGrid extends SummaryColumns {
  readonly width: number;
  readonly height: number;
}

export interface Presets {
  models: ModelPreset[];
  /** The reference model's constants per GPU (blis-v2, corrected). */
  gpus: GpuPreset[];
  gpu_specs: GpuSpec[];
  kernels: KernelSet[];
  modes: Mode[];
  /** Every warning code, in the order summaries list them. */
  warning_codes: string[];
}

export type GpuPreset = Required<HardwareOverrides> & { name: string };

/** A request's model resolved without pricing (resolveModel). */
export interface ResolvedModel extends ModelShape {
  /** The preset's canonical name, or null for a config object. */
  preset: string | null;
  /** "preset:NAME" or "config", for display. */
  source: string;
  /** The dtype name the bytes per parameter came from ("" when given explicitly). */
  torch_dtype: string;
  /** Config features the step model ignores (codes: Catalogue['model_config']['notes']). */
  notes: Warning[];
  /**
   * How the measured mode reads the config beyond the shape: two models with the same
   * shape, notes and spec price alike in every mode.
   */
  spec: ModelSpecSummary;
}

/** ResolvedModel['spec']: the model as vLLM would run it (zeros and "" where the config says nothing). */
export interface ModelSpecSummary {
  model_type: string;
  architecture: string;
  head_dim: number;
  /** The context vLLM allows by default; 0 when the config gives none. */
  max_model_len: number;
  tie_word_embeddings: boolean;
  activation: string;
  qk_norm: boolean;
  /** The query/key norms span every head (MiniMax-M2's qk_norm_type "per_layer"): an all-reduce per layer under TP. */
  qk_norm_all_heads: boolean;
  sliding_window: number;
  sliding_layers: number;
  attention_chunk: number;
  has_vision: boolean;
  quantization: { method: string; format: 'bf16' | 'fp8' | 'fp8_block' | 'nvfp4' | 'mxfp4' | 'int4';
    attention: boolean; mlp: boolean; experts: boolean; group_size: number; kv_fp8: boolean };
  moe: { num_experts: number; top_k: number; expert_intermediate: number; shared_experts: number;
    shared_intermediate: number; num_moe_layers: number; dense_intermediate: number };
  mla: { kv_lora_rank: number; q_lora_rank: number; qk_nope_head_dim: number; qk_rope_head_dim: number;
    v_head_dim: number };
}

/** The facts the core owns, exported once (catalogue()); nothing else retypes them. */
export interface Catalogue {
  version: string;
  modes: Array<{ name: Mode; description: string }>;
  default_mode: Mode;
  /** The phases a step can be bound by, in the order summary columns number them. */
  bounds: Bound[];
  /** The fields of a request's `hardware` object (the reference modes' GPU constants). */
  hardware_fields: Array<keyof HardwareOverrides>;
  corrected: {
    switches: Array<{ name: CorrectedSwitch; description: string }>;
    params: Array<{ name: CorrectedParam; unit: string; default: number; min: number; max: number;
      description: string }>;
  };
  sweep: {
    axes: Array<{ name: SweepAxis; unit: string; min: number; max: number }>;
    /** KV length of the decode a decode_batch sweep adds when the step has none. */
    default_decode_kv: number;
    max_points: number;
  };
  request_fields: Array<keyof Request>;
  /** The values an enum-like request field accepts. */
  request_choices: { quantization: Array<NonNullable<Request['quantization']>>;
    kv_cache_dtype: Array<NonNullable<Request['kv_cache_dtype']>> };
  request_defaults: { gpu: string; tp: number; mode: Mode };
  model_config: {
    /** The resolved model's shape fields, in a fixed order. */
    shape_fields: Array<keyof ModelConfig & keyof ResolvedModel>;
    /** Notes a config may raise, with the config keys that raise them. */
    notes: Array<{ code: string; keys: string[] }>;
    /**
     * The config keys the measured mode reads beyond the shape: `merged` at the top level or
     * in text_config (which wins), `top_only` at the top level alone.
     */
    spec_keys: { merged: string[]; top_only: string[] };
  };
  dtypes: Array<{ name: string; bytes_per_param: number }>;
  /** GPUs with the reference's MFU tables (blis-v2, corrected). */
  gpus: GpuPreset[];
  /** Every GPU's constants (presets/gpus/) and its measured kernel versions. */
  gpu_specs: GpuSpec[];
  /** The measured kernel sets built, per GPU and version. */
  kernels: KernelSet[];
  /** Input limits (docs/INPUT.md); beyond them a request is refused. */
  limits: {
    document_bytes: number;
    json_depth: number;
    config_depth: number;
    requests_per_step: number;
    tokens: number;
    layers: number;
    hidden_size: number;
    intermediate_size: number;
    heads: number;
    vocab_size: number;
    tp: number;
    bytes_per_param: number;
    tflops_peak_min: number;
    tflops_peak_max: number;
    bw_peak_tbs_min: number;
    bw_peak_tbs_max: number;
    per_layer_overhead_us_max: number;
    string_bytes: number;
    tags: number;
    batch: number;
    result_bytes: number;
    sweep_points: number;
    sweep_requests: number;
  };
}

/**
 * The API of an instantiated module; every call is synchronous. Inputs larger than the
 * core's limits (catalogue().limits: document_bytes, string_bytes, sweep_points) are
 * refused before they are copied into the module. If the module ever traps, the call
 * throws StepCalcError `internal_error`, every later call on this object does too,
 * and the next load() makes a fresh instance.
 */
export interface StepCalc {
  /**
   * Prices one request (object or JSON text). Throws StepCalcError on bad input.
   * `detail` (default: the request's own, else 'full') chooses the result's detail. A large
   * full result's `phases.decode.attn_lookups` (one object per KV length) is parsed when first
   * read: an enumerable accessor that JSON.stringify, structuredClone and assignment treat as data.
   */
  price(request: Request | string, options?: { detail?: 'full' }): Result;
  price(request: Request | string, options: { detail: 'summary' }): SummaryResult;
  price(request: Request | string, options?: { detail?: Detail }): Result | SummaryResult;
  /** Prices several requests; a bad element becomes {error} in its slot. */
  priceAll(
    requests: Request[],
    options?: { mode?: Mode | ''; detail?: Detail },
  ): Array<Result | SummaryResult | { id?: string; error: ErrorInfo }>;
  /** Summaries of several requests as columns (one entry per request). */
  priceMany(requests: Request[], options?: { mode?: Mode | '' }): SummaryColumns;
  /** Prices `request` once per value of `axis`, in order. */
  sweep(request: Request | string, axis: SweepAxis, values: number[]): SweepPoint[];
  /** The same sweep as columns (summary detail). */
  sweepColumns(request: Request | string, axis: SweepAxis, values: ArrayLike<number>): SummaryColumns;
  /** A 2-D sweep for heat maps: every y.values[i] on y.axis with every x.values[j] on x.axis. */
  sweep2d(
    request: Request | string,
    x: { axis: SweepAxis; values: ArrayLike<number> },
    y: { axis: SweepAxis; values: ArrayLike<number> },
  ): SweepGrid;
  /** Serving estimate: memory, scheduler simulation, TTFT/TPOT/ITL/E2E, throughput, cost. */
  serve(request: ServeRequest | string, options?: ServeOptions): ServeResult;
  serve(requests: Array<ServeRequest | string>, options?: ServeOptions):
    Array<ServeResult | { id?: string; error: ErrorInfo }>;
  /**
   * Deployment plan (docs/PLAN.md): loads each candidate GPU's tables (and, on the first call,
   * the planner's own module, `dist/stepcalc-plan.js` and `.wasm`, which is given every kernel
   * pack this instance loads), then recommends the cheapest configuration meeting the target.
   * Rejects with StepCalcError (cancelled, io_error when the planner's module cannot be read, ...).
   */
  plan(request: PlanRequest | string, options?: PlanOptions): Promise<PlanResult>;
  /** A fresh copy on every call: changing it affects no other caller. */
  presets(): Presets;
  /**
   * Loads the measured kernel tables of `gpu` at `version` (default: the GPU's default),
   * every part or those listed: read from disk under Node, fetched next to the module in
   * a browser, once (concurrent calls share the reads). Rejects with StepCalcError
   * unknown_gpu, unknown_kernels, invalid_value (parts), io_error or corrupt_kernels.
   * Pricing that needs tables not loaded throws kernels_not_loaded naming the GPU.
   */
  loadKernels(gpu: GpuName | string, version?: string, parts?: KernelPart[]):
    Promise<{ gpu: GpuName; version: string; parts: KernelPart[] }>;
  /**
   * For a Worker: `postMessage(calc.forWorker())` there, `load({ ...data, baseUrl })` in it,
   * and the worker's module is neither fetched nor compiled again, nor the packs read so far.
   */
  forWorker(): { wasmModule: WebAssembly.Module; kernelPacks: Record<string, Uint8Array> };
  /** A fresh copy on every call. */
  catalogue(): Catalogue;
  /** A preset name or config object resolved to the model the core prices. Throws StepCalcError. */
  resolveModel(model: string | ModelConfig): ResolvedModel;
  version(): string;
}

/** A refusal to price. `path` is the JSON path at fault, e.g. "step.decode_requests[3].progress_index". */
export class StepCalcError extends Error {
  constructor(code: string, path: string, message: string);
  readonly name: 'StepCalcError';
  readonly code: string;
  readonly path: string;
}

/**
 * Instantiates the module once (later calls share the promise). `wasmBinary` skips the
 * fetch; `planWasmBinary` likewise for the planner's module (`dist/stepcalc-plan.wasm`, read
 * on the first plan() only); `baseUrl` is the folder holding `dist/` (default: beside
 * stepcalc.js), for pages that bundle this file elsewhere; `kernelsUrl` the folder of the
 * kernel packs (default: `dist/kernels/` under `baseUrl`).
 */
export function load(options?: {
  wasmBinary?: ArrayBuffer | Uint8Array;
  /** The compiled core from another instance's forWorker(): neither fetched nor compiled again. */
  wasmModule?: WebAssembly.Module;
  /** Kernel packs another instance read (forWorker()): file name -> bytes, not fetched again. */
  kernelPacks?: Record<string, Uint8Array>;
  planWasmBinary?: ArrayBuffer | Uint8Array;
  baseUrl?: string | URL;
  kernelsUrl?: string | URL;
}): Promise<StepCalc>;
export function loadKernels(
  gpu: GpuName | string, version?: string, parts?: KernelPart[]): ReturnType<StepCalc['loadKernels']>;
export function price(request: Request | string, options?: { detail?: 'full' }): Promise<Result>;
export function price(request: Request | string, options: { detail: 'summary' }): Promise<SummaryResult>;
export function sweep(request: Request | string, axis: SweepAxis, values: number[]): Promise<SweepPoint[]>;
export function serve(request: ServeRequest | string, options?: ServeOptions): Promise<ServeResult>;
export function plan(request: PlanRequest | string, options?: PlanOptions): Promise<PlanResult>;
export function presets(): Promise<Presets>;
export function catalogue(): Promise<Catalogue>;
export function resolveModel(model: string | ModelConfig): Promise<ResolvedModel>;
export function version(): Promise<string>;
