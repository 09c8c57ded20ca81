import { describe, expect, it } from 'vitest';
import type { WatchedObject } from '@slicemesh/contracts';
import { ANNOTATION_TOPOLOGY_MODE } from '@slicemesh/model';
import { makeNode, makePod, makeService } from '@slicemesh/testing';
import { describeChange } from './causes.ts';

const pod = (o: Parameters<typeof makePod>[1] = {}) => makePod('web-7', { namespace: 'shop', nodeName: 'worker-b-2', ...o });
const svc = makeService('web', { namespace: 'shop' });
const exp: WatchedObject = { apiVersion: 'multicluster.x-k8s.io/v1alpha1', kind: 'ServiceExport', metadata: { name: 'web', namespace: 'shop' } };

describe('describeChange', () => {
  it.each<[string, WatchedObject | undefined, WatchedObject | undefined, string[]]>([
    ['a pod becoming Ready', pod({ ready: false }), pod(), ['pod shop/web-7 became Ready on worker-b-2']],
    ['a service export created', undefined, exp, ['service export shop/web was created']],
    ['a service export deleted', exp, undefined, ['service export shop/web was deleted']],
    ['a pod created Ready', undefined, pod(), ['pod shop/web-7 was created on worker-b-2 and is Ready']],
    ['a pod deleted', pod(), undefined, ['pod shop/web-7 was deleted on worker-b-2']],
    ['a pod starting to terminate', pod(), pod({ terminating: true }), ['pod shop/web-7 started terminating on worker-b-2']],
    ['a pod scheduled', pod({ nodeName: '' }), pod(), ['pod shop/web-7 was scheduled to worker-b-2']],
    ['a pod given an IP', pod({ ips: [] }), pod({ ips: ['10.0.0.9'] }), ['pod shop/web-7 got IP 10.0.0.9 on worker-b-2']],
    ['a pod relabelled', pod(), pod({ labels: { app: 'other' } }), ['pod shop/web-7 labels changed to app=other']],
    ['a node moving zone', makeNode('worker-a-1', { zone: 'zone-a' }), makeNode('worker-a-1', { zone: 'zone-c' }), ['node worker-a-1 moved to zone-c from zone-a']],
    ['a node losing its zone', makeNode('n', { zone: 'zone-a' }), makeNode('n'), ['node n lost its zone label (was zone-a)']],
    ['a node going NotReady', makeNode('n', { zone: 'z' }), makeNode('n', { zone: 'z', ready: false }), ['node n became NotReady']],
    ['a node joining', undefined, makeNode('n', { zone: 'z' }), ['node n joined in z']],
    ['a node CPU change', makeNode('n', { cpu: '4' }), makeNode('n', { cpu: '8' }), ['node n allocatable CPU is now 8']],
    ['a Service asking for hints', svc, makeService('web', { namespace: 'shop', annotations: { [ANNOTATION_TOPOLOGY_MODE]: 'Auto' } }), ['service shop/web topology mode annotation is now Auto']],
    ['a Service traffic policy', svc, makeService('web', { namespace: 'shop', spec: { internalTrafficPolicy: 'Local' } }), ['service shop/web internalTrafficPolicy is now Local']],
    ['a Service selector', svc, makeService('web', { namespace: 'shop', selector: { app: 'v2' } }), ['service shop/web selector changed to app=v2']],
    ['nothing the control plane reads', pod(), pod(), ['pod shop/web-7 was updated']],
  ])('%s', (_name, before, after, want) => {
    expect(describeChange(before, after)).toEqual(want);
  });
});
