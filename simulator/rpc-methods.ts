import bs58 from 'bs58';
import { RpcSubmitError } from './chain/preflight';
import type { RpcChain } from './chain/types';
import type { RpcProvider } from './rpc-provider';
import { RawJson } from './rpc-json';
import type { RpcLedger } from './rpc-ledger';
import { configParam, encodingOf, RPC_CODES, rpcError, type RpcCall } from './rpc-request';
import { belowConfirmedRefusal, minContextSlotRefusal, type NodeView } from './rpc-pool';

export interface RpcMethodsDeps {
  simulator: RpcChain;
  ledger: RpcLedger;
  submit: (base64: string) => string;
  provider: RpcProvider;
  /** getTransaction answers null for these (a node whose copy of the slot lacks them). */
  withheldBody: (signature: string) => boolean;
}

/** The Solana JSON-RPC methods the simulated chain serves, each answered from one node's view. */
export function createRpcMethods({ simulator, ledger, submit, provider, withheldBody }: RpcMethodsDeps) {
  /** An account in the RPC's `base64` encoding, or null. */
  function accountValue(address: string) {
    const a = simulator.account(address);
    if (!a) return null;
    return { data: [Buffer.from(a.data).toString('base64'), 'base64'], executable: false, lamports: a.lamports, owner: a.owner, rentEpoch: 18446744073709551615, space: a.data.length };
  }

  const badConfig = (id: RpcCall['id']) => rpcError(id, RPC_CODES.invalidParams, 'Invalid params: the configuration must be an object');

  /** One call, answered from what the node that took it has (`view`, rpc-pool.ts). */
  function handle({ id, method, params }: RpcCall, view: NodeView): unknown {
    switch (method) {
      case 'getHealth':
        return { jsonrpc: '2.0', id, result: 'ok' };
      case 'getSlot': {
        const cfg = configParam(params[0]);
        if (!cfg) return badConfig(id);
        return minContextSlotRefusal(id, cfg, view) ?? { jsonrpc: '2.0', id, result: view.slot };
      }
      case 'getBlockHeight':
        return { jsonrpc: '2.0', id, result: simulator.slot };
      case 'getLatestBlockhash': {
        const { slot, blockhash, lastValidBlockHeight } = simulator.latestBlockhash();
        return { jsonrpc: '2.0', id, result: { context: { slot }, value: { blockhash, lastValidBlockHeight } } };
      }
      case 'sendTransaction': {
        const [wire, rawCfg] = params;
        if (typeof wire !== 'string') return rpcError(id, -32602, 'Invalid params: transaction');
        const cfg = configParam(rawCfg);
        if (!cfg) return badConfig(id);
        const encoding = encodingOf(cfg, 'base58');
        if (encoding !== 'base58' && encoding !== 'base64') return rpcError(id, -32602, `unsupported encoding: ${encoding ?? typeof cfg.encoding}`);
        try {
          const base64 = encoding === 'base64' ? wire : Buffer.from(bs58.decode(wire)).toString('base64');
          return { jsonrpc: '2.0', id, result: submit(base64) };
        } catch (err) {
          if (err instanceof RpcSubmitError) return { jsonrpc: '2.0', id, error: { code: err.code, message: err.message, ...(err.data === undefined ? {} : { data: err.data }) } };
          return rpcError(id, -32602, `invalid transaction: ${err instanceof Error ? err.message : String(err)}`);
        }
      }
      case 'getSignaturesForAddress': {
        const [address, rawCfg] = params;
        if (typeof address !== 'string') return rpcError(id, -32602, 'Invalid params: address');
        const cfg = configParam(rawCfg) as { limit?: unknown; before?: unknown; until?: unknown } | undefined;
        if (!cfg) return badConfig(id);
        const refused = belowConfirmedRefusal(id, cfg) ?? minContextSlotRefusal(id, cfg, view);
        if (refused) return refused;
        const optionalText = (v: unknown) => v === undefined || v === null || typeof v === 'string';
        if (!optionalText(cfg.before) || !optionalText(cfg.until)) return rpcError(id, -32602, 'Invalid params: before and until must be signatures');
        const limit = cfg.limit ?? 1000;
        if (typeof limit !== 'number' || !Number.isInteger(limit) || limit < 1 || limit > 1000) return rpcError(id, -32602, 'Invalid limit');
        if (address !== simulator.programId) return { jsonrpc: '2.0', id, result: [] };
        const out = ledger
          .list(limit, typeof cfg.before === 'string' ? cfg.before : undefined, typeof cfg.until === 'string' ? cfg.until : undefined, view.slot)
          .map((o) => ({ signature: o.signature, slot: o.slot, err: o.err, memo: null, blockTime: o.blockTime, confirmationStatus: 'confirmed' }));
        return { jsonrpc: '2.0', id, result: out };
      }
      case 'getTransaction': {
        const [signature, rawCfg] = params;
        if (typeof signature !== 'string') return rpcError(id, -32602, 'Invalid params: signature');
        const cfg = configParam(rawCfg);
        if (!cfg) return badConfig(id);
        const refused = belowConfirmedRefusal(id, cfg);
        if (refused) return refused;
        const encoding = encodingOf(cfg, 'json');
        if (encoding === undefined) return rpcError(id, -32602, 'Invalid params: encoding must be a string');
        const entry = ledger.get(signature);
        // A node that has not confirmed the slot yet has no body for it (Agave takes no
        // minContextSlot here: RpcTransactionConfig has none).
        if (!entry || entry.slot > view.slot || withheldBody(signature)) return { jsonrpc: '2.0', id, result: null };
        if (entry.version === 0 && cfg.maxSupportedTransactionVersion === undefined) {
          return rpcError(id, -32015, 'Transaction version (0) is not supported by the requesting client. Please try the request again with the following configuration parameter: "maxSupportedTransactionVersion": 0');
        }
        if (encoding !== 'json') return rpcError(id, -32602, `Unsupported encoding ${encoding} in the simulator`);
        provider.servedTransaction(signature);
        return { jsonrpc: '2.0', id, result: new RawJson(entry.json) };
      }
      case 'getSignatureStatuses': {
        // The blockstore's status when `searchTransactionHistory` is set; without it Agave reads
        // only its status cache of recent slots, which this chain keeps as the last 150.
        const [signatures, rawCfg] = params;
        if (!Array.isArray(signatures) || signatures.some((s) => typeof s !== 'string')) return rpcError(id, -32602, 'Invalid params: signatures');
        if (signatures.length > 256) return rpcError(id, -32602, 'Too many inputs provided; max 256');
        const cfg = configParam(rawCfg);
        if (!cfg) return badConfig(id);
        const value = (signatures as string[]).map((s) => {
          const e = ledger.get(s);
          if (!e || e.slot > view.slot || (cfg.searchTransactionHistory !== true && e.slot < view.slot - 150)) return null;
          return { slot: e.slot, confirmations: null, err: e.err, status: e.err ? { Err: e.err } : { Ok: null }, confirmationStatus: 'confirmed' };
        });
        return { jsonrpc: '2.0', id, result: { context: { apiVersion: '2.2.0', slot: view.slot }, value } };
      }
      case 'getAccountInfo': {
        const [address, rawCfg] = params;
        if (typeof address !== 'string') return rpcError(id, -32602, 'Invalid params: address');
        const cfg = configParam(rawCfg);
        if (!cfg) return badConfig(id);
        const encoding = encodingOf(cfg, 'binary');
        if (encoding !== 'base64') return rpcError(id, -32602, `Unsupported encoding ${encoding ?? typeof cfg.encoding} in the simulator`);
        const refused = minContextSlotRefusal(id, cfg, view);
        if (refused) return refused;
        return { jsonrpc: '2.0', id, result: { context: { apiVersion: '2.2.0', slot: view.slot }, value: accountValue(address) } };
      }
      case 'getMultipleAccounts': {
        const [addresses, rawCfg] = params;
        if (!Array.isArray(addresses) || addresses.some((a) => typeof a !== 'string')) return rpcError(id, -32602, 'Invalid params: addresses');
        if (addresses.length > 100) return rpcError(id, -32602, 'Too many inputs provided; max 100');
        const cfg = configParam(rawCfg);
        if (!cfg) return badConfig(id);
        const encoding = encodingOf(cfg, 'binary');
        if (encoding !== 'base64') return rpcError(id, -32602, `Unsupported encoding ${encoding ?? typeof cfg.encoding} in the simulator`);
        const refused = minContextSlotRefusal(id, cfg, view);
        if (refused) return refused;
        return { jsonrpc: '2.0', id, result: { context: { apiVersion: '2.2.0', slot: view.slot }, value: (addresses as string[]).map(accountValue) } };
      }
      default:
        return rpcError(id, -32601, 'Method not found');
    }
  }

  return handle;
}
