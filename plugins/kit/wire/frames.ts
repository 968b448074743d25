/**
 * The RPC wire's frame limit, shared by the RPC mode (which drops longer lines unread) and RpcClient (which refuses
 * to send one, since an over-long line cannot be answered with its id).
 */

/** The most bytes one JSON line may have before its LF in RPC mode (16 MiB); docs/rpc.md states it. */
export const RPC_MAX_FRAME_BYTES = 16 * 1024 * 1024;
