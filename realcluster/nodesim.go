package main

// nodesim.go does a kubelet's and a volume provisioner's visible work, as kwok does, so workloads
// progress through the real controllers: it registers one Node (Ready, large allocatable), renews
// its Lease, turns pods the real scheduler bound to it Running and Ready after a delay (Job pods:
// Succeeded), finishes graceful deletions, and provisions a PersistentVolume for each claim of the
// default StorageClass it owns. No container ever runs and nothing dials a pod IP. Pods of a
// Deployment or a StatefulSet annotated simulation.example.com/unready=true report Ready=False, as if
// their readiness probes failed, until the annotation goes.
//
// Pod logs (kubelet.go): the node's InternalIP is 127.0.0.1 and its kubeletEndpoint port is a TLS
// endpoint of this process serving the kubelet's GET /containerLogs/<ns>/<pod>/<container> to
// kube-apiserver's kubelet client certificate only. A container's log is simulated: what it would have
// been started with (image, command, args, env variable NAMES, never values nor anything of a Secret),
// then, while following, "simulated: no container runs on realcluster-node" every few seconds.
// follow, tailLines, sinceSeconds/sinceTime, timestamps, limitBytes and stream behave as the
// kubelet's; previous is the kubelet's 400 "previous terminated container ... not found" (none ever
// terminated).

import (
	"context"
	"fmt"
	"net"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	appslisters "k8s.io/client-go/listers/apps/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
)

const (
	nodeName         = "realcluster-node"
	nodeIP           = "127.0.0.1" // kube-apiserver dials the kubelet endpoint here (pods/log)
	storageClassName = "standard"
	provisionerName  = "realcluster.example.com/fake-provisioner"
	provisionedBy    = "pv.kubernetes.io/provisioned-by"
	leaseDurationS   = 40
	// unreadyAnnotation on a Deployment or a StatefulSet makes its pods fail their readiness (for tests
	// of not-ready paths); devcluster's simulated Deployments and StatefulSets honour the same annotation.
	unreadyAnnotation = "simulation.example.com/unready"
)

type nodeSimulator struct {
	client     kubernetes.Interface
	readyDelay time.Duration
	version    string
	kubelet    *kubelet

	pods   workqueue.TypedRateLimitingInterface[string]
	claims workqueue.TypedRateLimitingInterface[string]

	replicaSets  appslisters.ReplicaSetLister
	deployments  appslisters.DeploymentLister
	statefulSets appslisters.StatefulSetLister

	mu     sync.Mutex
	seen   map[types.UID]time.Time // first sight of a pod on the node: its ready delay counts from here
	ips    map[types.UID]string
	nextIP uint32
}

func newNodeSimulator(client kubernetes.Interface, readyDelay time.Duration, version string, kubelet *kubelet) *nodeSimulator {
	return &nodeSimulator{
		client:     client,
		readyDelay: readyDelay,
		version:    version,
		kubelet:    kubelet,
		pods:       workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[string]()),
		claims:     workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[string]()),
		seen:       map[types.UID]time.Time{},
		ips:        map[types.UID]string{},
		nextIP:     2,
	}
}

// register creates (or refreshes) the Node, its Lease and the default StorageClass.
func (s *nodeSimulator) register(ctx context.Context) error {
	node := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: nodeName, Labels: map[string]string{
			"kubernetes.io/hostname": nodeName, "kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64",
			"node.kubernetes.io/instance-type": "realcluster", "topology.kubernetes.io/zone": "realcluster-a",
		}},
	}
	if _, err := s.client.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create node: %w", err)
	}
	if err := s.heartbeat(ctx); err != nil {
		return err
	}
	if err := s.renewLease(ctx); err != nil {
		return err
	}
	class := &storagev1.StorageClass{
		ObjectMeta:        metav1.ObjectMeta{Name: storageClassName, Annotations: map[string]string{"storageclass.kubernetes.io/is-default-class": "true"}},
		Provisioner:       provisionerName,
		ReclaimPolicy:     ptr.To(corev1.PersistentVolumeReclaimDelete),
		VolumeBindingMode: ptr.To(storagev1.VolumeBindingWaitForFirstConsumer),
	}
	if _, err := s.client.StorageV1().StorageClasses().Create(ctx, class, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create storage class: %w", err)
	}
	return nil
}

// heartbeat writes the Node's status: Ready, no pressure, an address, what a kubelet reports.
func (s *nodeSimulator) heartbeat(ctx context.Context) error {
	node, err := s.client.CoreV1().Nodes().Get(ctx, nodeName, metav1.GetOptions{})
	if err != nil {
		return err
	}
	now := metav1.Now()
	condition := func(t corev1.NodeConditionType, status corev1.ConditionStatus, reason, message string) corev1.NodeCondition {
		since := now
		for _, c := range node.Status.Conditions {
			if c.Type == t && c.Status == status {
				since = c.LastTransitionTime
			}
		}
		return corev1.NodeCondition{Type: t, Status: status, Reason: reason, Message: message, LastHeartbeatTime: now, LastTransitionTime: since}
	}
	capacity := corev1.ResourceList{
		corev1.ResourceCPU: resource.MustParse("1000"), corev1.ResourceMemory: resource.MustParse("4Ti"),
		corev1.ResourcePods: resource.MustParse("1000000"), corev1.ResourceEphemeralStorage: resource.MustParse("1Ti"),
	}
	node.Status = corev1.NodeStatus{
		Capacity:    capacity,
		Allocatable: capacity,
		Phase:       corev1.NodeRunning,
		Conditions: []corev1.NodeCondition{
			condition(corev1.NodeMemoryPressure, corev1.ConditionFalse, "KubeletHasSufficientMemory", "kubelet has sufficient memory available"),
			condition(corev1.NodeDiskPressure, corev1.ConditionFalse, "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
			condition(corev1.NodePIDPressure, corev1.ConditionFalse, "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
			condition(corev1.NodeReady, corev1.ConditionTrue, "KubeletReady", "realcluster's simulated kubelet is posting ready status"),
		},
		Addresses:       []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: nodeIP}, {Type: corev1.NodeHostName, Address: nodeName}},
		DaemonEndpoints: corev1.NodeDaemonEndpoints{KubeletEndpoint: corev1.DaemonEndpoint{Port: s.kubelet.port()}},
		NodeInfo: corev1.NodeSystemInfo{
			KubeletVersion: s.version, OperatingSystem: "linux", Architecture: "amd64",
			ContainerRuntimeVersion: "realcluster://simulated", OSImage: "realcluster simulated node",
		},
	}
	_, err = s.client.CoreV1().Nodes().UpdateStatus(ctx, node, metav1.UpdateOptions{})
	return err
}

func (s *nodeSimulator) renewLease(ctx context.Context) error {
	leases := s.client.CoordinationV1().Leases(corev1.NamespaceNodeLease)
	now := metav1.NewMicroTime(time.Now())
	lease, err := leases.Get(ctx, nodeName, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		node, err := s.client.CoreV1().Nodes().Get(ctx, nodeName, metav1.GetOptions{})
		if err != nil {
			return err
		}
		lease = &coordinationv1.Lease{
			ObjectMeta: metav1.ObjectMeta{Name: nodeName, OwnerReferences: []metav1.OwnerReference{
				{APIVersion: "v1", Kind: "Node", Name: nodeName, UID: node.UID},
			}},
			Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To(nodeName), LeaseDurationSeconds: ptr.To[int32](leaseDurationS), RenewTime: &now},
		}
		_, err = leases.Create(ctx, lease, metav1.CreateOptions{})
		return err
	} else if err != nil {
		return err
	}
	lease.Spec.RenewTime = &now
	_, err = leases.Update(ctx, lease, metav1.UpdateOptions{})
	return err
}

// run keeps the node alive and works the pod and claim queues until ctx ends.
func (s *nodeSimulator) run(ctx context.Context) {
	go wait.UntilWithContext(ctx, func(ctx context.Context) { logIf(s.renewLease(ctx), "renew lease") }, 10*time.Second)
	go wait.UntilWithContext(ctx, func(ctx context.Context) { logIf(s.heartbeat(ctx), "node heartbeat") }, time.Minute)

	onNode := informers.NewSharedInformerFactoryWithOptions(s.client, 0, informers.WithTweakListOptions(func(o *metav1.ListOptions) {
		o.FieldSelector = fields.OneTermEqualSelector("spec.nodeName", nodeName).String()
	}))
	all := informers.NewSharedInformerFactory(s.client, 0)
	podInformer := onNode.Core().V1().Pods().Informer()
	replicaSetInformer := all.Apps().V1().ReplicaSets().Informer()
	deploymentInformer := all.Apps().V1().Deployments().Informer()
	statefulSetInformer := all.Apps().V1().StatefulSets().Informer()
	s.replicaSets = all.Apps().V1().ReplicaSets().Lister()
	s.deployments = all.Apps().V1().Deployments().Lister()
	s.statefulSets = all.Apps().V1().StatefulSets().Lister()
	claimInformer := all.Core().V1().PersistentVolumeClaims().Informer()
	volumeInformer := all.Core().V1().PersistentVolumes().Informer()
	enqueue := func(queue workqueue.TypedRateLimitingInterface[string]) cache.ResourceEventHandlerFuncs {
		add := func(obj any) {
			if key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj); err == nil {
				queue.Add(key)
			}
		}
		return cache.ResourceEventHandlerFuncs{AddFunc: add, UpdateFunc: func(_, obj any) { add(obj) }, DeleteFunc: add}
	}
	_, _ = podInformer.AddEventHandler(enqueue(s.pods))
	_, _ = claimInformer.AddEventHandler(enqueue(s.claims))
	podLister := onNode.Core().V1().Pods().Lister()
	// An unready annotation that comes or goes changes what every pod of that namespace should report.
	annotationChanged := func(namespace string) {
		pods, _ := podLister.Pods(namespace).List(labels.Everything())
		for _, pod := range pods {
			s.pods.Add(pod.Namespace + "/" + pod.Name)
		}
	}
	_, _ = deploymentInformer.AddEventHandler(cache.ResourceEventHandlerFuncs{UpdateFunc: func(old, obj any) {
		before, after := old.(*appsv1.Deployment), obj.(*appsv1.Deployment)
		if before.Annotations[unreadyAnnotation] != after.Annotations[unreadyAnnotation] {
			annotationChanged(after.Namespace)
		}
	}})
	_, _ = statefulSetInformer.AddEventHandler(cache.ResourceEventHandlerFuncs{UpdateFunc: func(old, obj any) {
		before, after := old.(*appsv1.StatefulSet), obj.(*appsv1.StatefulSet)
		if before.Annotations[unreadyAnnotation] != after.Annotations[unreadyAnnotation] {
			annotationChanged(after.Namespace)
		}
	}})
	_, _ = volumeInformer.AddEventHandler(cache.ResourceEventHandlerFuncs{UpdateFunc: func(_, obj any) { s.reclaim(ctx, obj.(*corev1.PersistentVolume)) }})
	onNode.Start(ctx.Done())
	all.Start(ctx.Done())
	cache.WaitForCacheSync(ctx.Done(), podInformer.HasSynced, claimInformer.HasSynced, volumeInformer.HasSynced,
		replicaSetInformer.HasSynced, deploymentInformer.HasSynced, statefulSetInformer.HasSynced)

	go s.kubelet.serve(ctx, podLister)
	claimLister := all.Core().V1().PersistentVolumeClaims().Lister()
	for i := 0; i < 4; i++ {
		go work(ctx, s.pods, func(key string) (time.Duration, error) {
			ns, name, _ := cache.SplitMetaNamespaceKey(key)
			pod, err := podLister.Pods(ns).Get(name)
			if apierrors.IsNotFound(err) {
				return 0, nil
			} else if err != nil {
				return 0, err
			}
			return s.syncPod(ctx, pod)
		})
	}
	go work(ctx, s.claims, func(key string) (time.Duration, error) {
		ns, name, _ := cache.SplitMetaNamespaceKey(key)
		claim, err := claimLister.PersistentVolumeClaims(ns).Get(name)
		if apierrors.IsNotFound(err) {
			return 0, nil
		} else if err != nil {
			return 0, err
		}
		return 0, s.provision(ctx, claim)
	})
	<-ctx.Done()
	s.pods.ShutDown()
	s.claims.ShutDown()
}

// work is a minimal controller loop: process, requeue after the returned delay, retry with backoff.
func work(ctx context.Context, queue workqueue.TypedRateLimitingInterface[string], sync func(string) (time.Duration, error)) {
	for {
		key, quit := queue.Get()
		if quit {
			return
		}
		after, err := sync(key)
		switch {
		case err != nil && ctx.Err() == nil:
			klog.Warningf("realcluster node: %s: %v", key, err)
			queue.AddRateLimited(key)
		case after > 0:
			queue.Forget(key)
			queue.AddAfter(key, after)
		default:
			queue.Forget(key)
		}
		queue.Done(key)
	}
}

// syncPod moves one pod along: graceful deletion finishes at once; a pending pod becomes Running
// and Ready (or, for run-to-completion pods, Succeeded) readyDelay after the node first saw it.
func (s *nodeSimulator) syncPod(ctx context.Context, pod *corev1.Pod) (time.Duration, error) {
	if pod.DeletionTimestamp != nil {
		s.forget(pod.UID)
		err := s.client.CoreV1().Pods(pod.Namespace).Delete(ctx, pod.Name, metav1.DeleteOptions{
			GracePeriodSeconds: ptr.To[int64](0), Preconditions: metav1.NewUIDPreconditions(string(pod.UID)),
		})
		if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
			return 0, nil
		}
		return 0, err
	}
	if pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed {
		return 0, nil
	}
	unready := s.heldUnready(pod)
	running := pod.Status.Phase == corev1.PodRunning
	if running && podReady(pod) == !unready {
		return 0, nil // already reports what it should
	}
	s.mu.Lock()
	first, ok := s.seen[pod.UID]
	if !ok {
		first = time.Now()
		s.seen[pod.UID] = first
	}
	ip, ok := s.ips[pod.UID]
	if !ok {
		ip = pod.Status.PodIP
		if ip == "" {
			ip = net.IPv4(10, 244, byte(s.nextIP>>8), byte(s.nextIP)).String()
			s.nextIP++
		}
		s.ips[pod.UID] = ip
	}
	s.mu.Unlock()
	if wait := time.Until(first.Add(s.readyDelay)); wait > 0 && !running {
		return wait, nil
	}
	updated := pod.DeepCopy()
	updated.Status = simulatedStatus(pod, ip, unready)
	_, err := s.client.CoreV1().Pods(pod.Namespace).UpdateStatus(ctx, updated, metav1.UpdateOptions{})
	if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
		return 0, nil // gone, or changed: a newer event brings it back
	}
	return 0, err
}

// heldUnready: the pod belongs to a StatefulSet, or (through its ReplicaSet) to a Deployment, annotated unready.
func (s *nodeSimulator) heldUnready(pod *corev1.Pod) bool {
	owner := metav1.GetControllerOf(pod)
	if owner == nil || s.replicaSets == nil {
		return false
	}
	if owner.Kind == "StatefulSet" {
		statefulSet, err := s.statefulSets.StatefulSets(pod.Namespace).Get(owner.Name)
		return err == nil && statefulSet.UID == owner.UID && statefulSet.Annotations[unreadyAnnotation] == "true"
	}
	if owner.Kind != "ReplicaSet" {
		return false
	}
	replicaSet, err := s.replicaSets.ReplicaSets(pod.Namespace).Get(owner.Name)
	if err != nil {
		return false
	}
	owner = metav1.GetControllerOf(replicaSet)
	if owner == nil || owner.Kind != "Deployment" {
		return false
	}
	deployment, err := s.deployments.Deployments(pod.Namespace).Get(owner.Name)
	return err == nil && deployment.Annotations[unreadyAnnotation] == "true"
}

func (s *nodeSimulator) forget(uid types.UID) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.seen, uid)
	delete(s.ips, uid)
}

func podReady(pod *corev1.Pod) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// simulatedStatus is what a kubelet would report once every container started: Running and Ready
// (restartPolicy Always; Running but not Ready when held unready), or Succeeded with exit code 0
// (run-to-completion pods such as Jobs').
func simulatedStatus(pod *corev1.Pod, ip string, unready bool) corev1.PodStatus {
	now := metav1.Now()
	completes := pod.Spec.RestartPolicy == corev1.RestartPolicyNever || pod.Spec.RestartPolicy == corev1.RestartPolicyOnFailure
	status := corev1.PodStatus{
		Phase: corev1.PodRunning, HostIP: nodeIP, HostIPs: []corev1.HostIP{{IP: nodeIP}},
		PodIP: ip, PodIPs: []corev1.PodIP{{IP: ip}}, StartTime: &now, QOSClass: pod.Status.QOSClass,
	}
	ready := corev1.ConditionTrue
	reason := ""
	if completes {
		status.Phase, ready, reason = corev1.PodSucceeded, corev1.ConditionFalse, "PodCompleted"
	} else if unready {
		ready, reason = corev1.ConditionFalse, "ContainersNotReady"
	}
	status.Conditions = []corev1.PodCondition{
		{Type: corev1.PodReadyToStartContainers, Status: corev1.ConditionTrue, LastTransitionTime: now},
		{Type: corev1.PodInitialized, Status: corev1.ConditionTrue, LastTransitionTime: now},
		{Type: corev1.PodReady, Status: ready, LastTransitionTime: now, Reason: reason},
		{Type: corev1.ContainersReady, Status: ready, LastTransitionTime: now, Reason: reason},
		{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: now},
	}
	containerStatus := func(c corev1.Container, terminated bool) corev1.ContainerStatus {
		cs := corev1.ContainerStatus{
			Name: c.Name, Image: c.Image, ImageID: "realcluster://" + c.Image, ContainerID: "realcluster://" + string(pod.UID) + "/" + c.Name,
			Ready: !terminated && !unready, Started: ptr.To(!terminated),
		}
		if terminated {
			cs.State.Terminated = &corev1.ContainerStateTerminated{ExitCode: 0, Reason: "Completed", StartedAt: now, FinishedAt: now}
		} else {
			cs.State.Running = &corev1.ContainerStateRunning{StartedAt: now}
		}
		return cs
	}
	for _, c := range pod.Spec.InitContainers {
		status.InitContainerStatuses = append(status.InitContainerStatuses, containerStatus(c, true))
	}
	for _, c := range pod.Spec.Containers {
		status.ContainerStatuses = append(status.ContainerStatuses, containerStatus(c, completes))
	}
	return status
}

// provision creates the PersistentVolume of a claim the PV controller handed to our provisioner.
func (s *nodeSimulator) provision(ctx context.Context, claim *corev1.PersistentVolumeClaim) error {
	if claim.Spec.VolumeName != "" || claim.DeletionTimestamp != nil ||
		claim.Annotations["volume.kubernetes.io/storage-provisioner"] != provisionerName {
		return nil
	}
	size := claim.Spec.Resources.Requests[corev1.ResourceStorage]
	volume := &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: "pvc-" + string(claim.UID), Annotations: map[string]string{provisionedBy: provisionerName}},
		Spec: corev1.PersistentVolumeSpec{
			Capacity:                      corev1.ResourceList{corev1.ResourceStorage: size},
			AccessModes:                   claim.Spec.AccessModes,
			PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimDelete,
			StorageClassName:              storageClassName,
			VolumeMode:                    claim.Spec.VolumeMode,
			ClaimRef: &corev1.ObjectReference{
				Kind: "PersistentVolumeClaim", APIVersion: "v1", Namespace: claim.Namespace, Name: claim.Name, UID: claim.UID,
			},
			PersistentVolumeSource: corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{
				Path: "/var/lib/realcluster/volumes/pvc-" + string(claim.UID), Type: ptr.To(corev1.HostPathDirectoryOrCreate),
			}},
			NodeAffinity: &corev1.VolumeNodeAffinity{Required: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
				MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "kubernetes.io/hostname", Operator: corev1.NodeSelectorOpIn, Values: []string{nodeName}}},
			}}}},
		},
	}
	_, err := s.client.CoreV1().PersistentVolumes().Create(ctx, volume, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		return nil
	}
	return err
}

// reclaim deletes a released volume we provisioned whose policy is Delete (the external
// provisioner's half of dynamic provisioning).
func (s *nodeSimulator) reclaim(ctx context.Context, volume *corev1.PersistentVolume) {
	if volume.Annotations[provisionedBy] != provisionerName || volume.Status.Phase != corev1.VolumeReleased ||
		volume.Spec.PersistentVolumeReclaimPolicy != corev1.PersistentVolumeReclaimDelete {
		return
	}
	err := s.client.CoreV1().PersistentVolumes().Delete(ctx, volume.Name, metav1.DeleteOptions{Preconditions: metav1.NewUIDPreconditions(string(volume.UID))})
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		klog.Warningf("realcluster node: reclaim %s: %v", volume.Name, err)
	}
}

func logIf(err error, what string) {
	if err != nil {
		klog.Warningf("realcluster node: %s: %v", what, err)
	}
}
