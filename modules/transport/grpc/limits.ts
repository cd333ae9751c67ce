/**
 * gRPC message size limits, set explicitly on every server and client (grpc-js would otherwise
 * cap received messages at 4 MiB, which refuses a `ScoreStream` pair of 1080p pictures, and leave
 * sent ones unbounded). 64 MiB admits one `ScoreStream` pair of 4K 10-bit 4:2:0 pictures (about
 * 50 MB) while bounding what one message can make the process hold. Job results never need large
 * messages: their per-frame values travel in pages of at most MAX_FRAMES_PER_MESSAGE frames.
 */
export const MAX_GRPC_MESSAGE_BYTES = 64 * 1024 * 1024

/** Channel options of every server and client of the project. */
export const grpcMessageLimits = {
  "grpc.max_receive_message_length": MAX_GRPC_MESSAGE_BYTES,
  "grpc.max_send_message_length": MAX_GRPC_MESSAGE_BYTES
} as const
