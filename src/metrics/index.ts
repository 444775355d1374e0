/**
 * Metrics and spans for zk-recipes from its `node:diagnostics_channel` contract: a prom-client
 * adapter (`zk_recipes_*` series in the registry you pass), an OpenTelemetry metrics adapter
 * (instruments of the `Meter` you pass) and OpenTelemetry spans (from the `Tracer` you pass).
 * Neither prom-client nor `@opentelemetry/api` is a dependency: you pass their objects, and the
 * types below are structural, so code without them compiles. Nothing is subscribed until an
 * adapter is created.
 *
 * @module
 */
export type { TrackableQueue } from './feed.js';
export {
  prometheusMetrics,
  type Labels,
  type PromClass,
  type PromClientModule,
  type PromCounter,
  type PromGauge,
  type PromGaugeOptions,
  type PromHistogram,
  type PromMetricOptions,
  type PrometheusMetrics,
  type PrometheusMetricsOptions,
  type PromRegistry,
} from './prometheus.js';
export {
  openTelemetryMetrics,
  type OpenTelemetryMetrics,
  type OpenTelemetryMetricsOptions,
  type OtelAttributes,
  type OtelCounter,
  type OtelHistogram,
  type OtelInstrumentOptions,
  type OtelMeter,
  type OtelObservableGauge,
  type OtelObservableResult,
} from './opentelemetry.js';
export {
  openTelemetryTracing,
  type OpenTelemetryTracing,
  type OpenTelemetryTracingOptions,
  type OtelContextApi,
  type OtelSpan,
  type OtelSpanOptions,
  type OtelTraceApi,
  type OtelTracer,
} from './tracing.js';
